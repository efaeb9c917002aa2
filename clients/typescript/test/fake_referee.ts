/**
 * A scripted referee for the runner's tests: a real gRPC server on 127.0.0.1 whose
 * every Play stream is handed, in turn, to one script of the test.
 */

import { Server, ServerCredentials, ServerDuplexStream } from "@grpc/grpc-js";
import { DeepPartial, PlayRequest, PlayResponse, PlayServiceService } from "../src/gen/pusoy/referee/v1/play_service";

/** One stream as the script sees it. */
export class Stream {
  private readonly queue: PlayRequest[] = [];
  private waiting: ((req: PlayRequest | undefined) => void) | undefined;
  private closed = false;

  constructor(private readonly call: ServerDuplexStream<PlayRequest, PlayResponse>) {
    call.on("data", (req: PlayRequest) => {
      if (this.waiting) {
        const resolve = this.waiting;
        this.waiting = undefined;
        resolve(req);
      } else {
        this.queue.push(req);
      }
    });
    const close = () => {
      this.closed = true;
      this.waiting?.(undefined);
      this.waiting = undefined;
    };
    call.on("end", close);
    call.on("error", close);
    call.on("cancelled", close);
  }

  /** The next message from the bot (undefined when the bot closed), within `timeoutMs`. */
  next(timeoutMs = 2000): Promise<PlayRequest | undefined> {
    const queued = this.queue.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    if (this.closed) return Promise.resolve(undefined);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("the bot sent nothing")), timeoutMs);
      this.waiting = (req) => {
        clearTimeout(timer);
        resolve(req);
      };
    });
  }

  send(response: DeepPartial<PlayResponse>): void {
    this.call.write(PlayResponse.fromPartial(response));
  }

  /** Ends the stream cleanly (status OK), as the referee does. */
  end(): void {
    this.call.end();
  }
}

export type Script = (stream: Stream) => Promise<void>;

export class FakeReferee {
  readonly requests: PlayRequest[][] = [];
  readonly errors: unknown[] = [];
  private readonly server = new Server();
  private readonly scripts: Script[];
  address = "";

  constructor(scripts: Script[]) {
    this.scripts = [...scripts];
    this.server.addService(PlayServiceService, {
      play: (call: ServerDuplexStream<PlayRequest, PlayResponse>) => {
        const script = this.scripts.shift();
        const stream = new Stream(call);
        if (script === undefined) {
          call.end();
          return;
        }
        script(stream).catch((err) => {
          this.errors.push(err);
          call.end();
        });
      },
    });
  }

  start(): Promise<string> {
    return new Promise((resolve, reject) => {
      this.server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (err, port) => {
        if (err) return reject(err);
        this.address = `127.0.0.1:${port}`;
        resolve(this.address);
      });
    });
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.tryShutdown(() => resolve()));
  }
}

/** A prompt message for the tests: the seat holds `hand` and may play `legal`. */
export function promptMessage(
  turnId: bigint,
  hand: string[],
  legal: string[][],
  extra: { canPass?: boolean; handNumber?: number; deadlineInMs?: number } = {},
): DeepPartial<PlayResponse> {
  return {
    kind: {
      $case: "prompt",
      value: {
        turnId,
        seat: 0,
        deadline: new Date(Date.now() + (extra.deadlineInMs ?? 2000)),
        turnTimeMs: 2000,
        hand,
        legalPlays: legal.map((cards) => ({ cards, combination: cards.length === 1 ? 1 : 2 })),
        canPass: extra.canPass ?? false,
        isLead: !(extra.canPass ?? false),
        attemptsLeft: 3,
        state: { matchId: "m1", handNumber: extra.handNumber ?? 1, cardCounts: [13, 13, 13, 13] },
      },
    },
  };
}

export const welcome = (reconnect = false): DeepPartial<PlayResponse> => ({
  kind: { $case: "welcome", value: { seat: 0, matchId: "m1", protocolVersion: 1, reconnect } },
});

export const snapshot = (): DeepPartial<PlayResponse> => ({
  kind: { $case: "snapshot", value: { state: { matchId: "m1", handNumber: 1 }, hand: ["3C", "4D"] } },
});

export const matchEnded = (): DeepPartial<PlayResponse> => ({
  kind: {
    $case: "event",
    value: {
      kind: {
        $case: "matchEnded",
        value: { status: 3, standings: [{ place: 2, seats: [0], total: 5 }, { place: 1, seats: [1], total: 0 }] },
      },
    },
  },
});
