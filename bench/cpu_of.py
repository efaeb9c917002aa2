#!/usr/bin/env python3
"""Run a command; when it ends, print the CPU time it and its children used, to stderr.

python bench/cpu_of.py COMMAND...    # last stderr line: "cpu_of: 0.66 s CPU"
"""

import resource
import subprocess
import sys

if __name__ == "__main__":
    code = subprocess.run(sys.argv[1:], check=False).returncode
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"cpu_of: {used.ru_utime + used.ru_stime:.3f} s CPU", file=sys.stderr, flush=True)
    sys.exit(code)
