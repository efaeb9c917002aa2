package io.pusoyreferee.client;

/** The referee could not be reached (again) within the reconnect window. */
public final class UnreachableException extends Exception {

  private static final long serialVersionUID = 1L;

  public UnreachableException(String message, Throwable cause) {
    super(message, cause);
  }
}
