package io.pusoyreferee.client;

/** A bad setting: an unknown flag, a missing token, an unreadable TLS file (exit 64). */
public final class UsageException extends Exception {

  private static final long serialVersionUID = 1L;

  public UsageException(String message) {
    super(message);
  }

  public UsageException(String message, Throwable cause) {
    super(message, cause);
  }
}
