package io.pusoyreferee.client;

import io.grpc.Status;

/**
 * The stream failed with a status a reconnect cannot fix ({@code UNIMPLEMENTED}, {@code
 * UNAUTHENTICATED}, {@code PERMISSION_DENIED}, ...).
 */
public final class RpcFailedException extends Exception {

  private static final long serialVersionUID = 1L;

  private final transient Status status;

  public RpcFailedException(Status status) {
    super("the stream failed: " + describe(status), status.getCause());
    this.status = status;
  }

  public Status status() {
    return status;
  }

  static String describe(Status status) {
    return status.getDescription() == null
        ? status.getCode().toString()
        : status.getCode() + ": " + status.getDescription();
  }
}
