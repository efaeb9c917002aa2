#!/usr/bin/env python3
"""A bot that never connects, and starts a child that would outlive it if not killed.

The child's command line carries the first argument, so a test can look for it.
"""

import subprocess
import sys
import time

if __name__ == "__main__":
    marker = sys.argv[1] if len(sys.argv) > 1 else "hang"
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", marker])
    time.sleep(600)
