package io.pusoyreferee.client;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import io.pusoyreferee.referee.v1.PlayRequest;
import io.pusoyreferee.referee.v1.PlayServiceGrpc;
import io.pusoyreferee.referee.v1.PlayResponse;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** An in-process PlayService whose answers a test scripts, one stream at a time. */
final class FakeReferee implements AutoCloseable {

  /** One stream, as the referee sees it. */
  static final class Conn {
    final int index;
    final List<PlayRequest> received = new CopyOnWriteArrayList<>();
    private final StreamObserver<PlayResponse> out;
    private volatile boolean ended;

    Conn(int index, StreamObserver<PlayResponse> out) {
      this.index = index;
      this.out = out;
    }

    synchronized void send(PlayResponse... messages) {
      for (PlayResponse msg : messages) {
        if (!ended) {
          out.onNext(msg);
        }
      }
    }

    synchronized void close() {
      if (!ended) {
        ended = true;
        out.onCompleted();
      }
    }

    synchronized void fail(Status status) {
      if (!ended) {
        ended = true;
        out.onError(status.asRuntimeException());
      }
    }

    /** The number of actions received so far. */
    int actions() {
      return (int) received.stream().filter(PlayRequest::hasAction).count();
    }
  }

  /** What the referee does on each request of a stream. */
  @FunctionalInterface
  interface Script {
    void onRequest(Conn conn, PlayRequest request);
  }

  final List<Conn> conns = new CopyOnWriteArrayList<>();
  private final Server server;
  final ManagedChannel channel;

  FakeReferee(Script script) throws IOException {
    String name = InProcessServerBuilder.generateName();
    ServerServiceDefinition service =
        ServerServiceDefinition.builder(PlayServiceGrpc.SERVICE_NAME)
            .addMethod(
                PlayServiceGrpc.getPlayMethod(),
                ServerCalls.asyncBidiStreamingCall(
                    out -> {
                      Conn conn = new Conn(conns.size(), out);
                      conns.add(conn);
                      return new StreamObserver<PlayRequest>() {
                        @Override
                        public void onNext(PlayRequest request) {
                          conn.received.add(request);
                          script.onRequest(conn, request);
                        }

                        @Override
                        public void onError(Throwable t) {
                          conn.ended = true;
                        }

                        @Override
                        public void onCompleted() {
                          conn.close();
                        }
                      };
                    }))
            .build();
    server = InProcessServerBuilder.forName(name).addService(service).build().start();
    channel = InProcessChannelBuilder.forName(name).build();
  }

  /** Every request of every stream, in order. */
  List<PlayRequest> allRequests() {
    List<PlayRequest> all = new ArrayList<>();
    for (Conn conn : conns) {
      all.addAll(conn.received);
    }
    return all;
  }

  @Override
  public void close() {
    channel.shutdownNow();
    server.shutdownNow();
  }
}
