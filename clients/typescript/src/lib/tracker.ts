/**
 * A seat's view of the match, kept from the welcome, the snapshot and the events. Feed it
 * from the bot's hooks (or extend {@link TrackingBot}) and read it in `choose`. It starts
 * again from every snapshot, so it is right after a reconnect too. Checked against the
 * referee's own PublicState in clients/conformance/tracker_streams.jsonl.
 */

import { Event } from "../gen/pusoy/referee/v1/common";
import { Snapshot, Welcome } from "../gen/pusoy/referee/v1/play_service";
import { Bot } from "./bot";
import { DEFAULT_RULES, Rules, rulesFrom, sortCards } from "./rules";

export interface TrickEntry {
  seat: number;
  /** Empty for a pass. */
  cards: string[];
}

export class Tracker {
  seat = -1;
  rules: Rules = DEFAULT_RULES;
  passLocksOut = false;
  handNumber = 0;
  hand: string[] = [];
  cardCounts = [0, 0, 0, 0];
  playedCards: string[] = [];
  trick: TrickEntry[] = [];
  table: string[] = [];
  tableSeat: number | undefined = undefined;
  lockedOut = [false, false, false, false];
  revolution = false;
  totals = [0, 0, 0, 0];
  handsWon = [0, 0, 0, 0];

  onWelcome(welcome: Welcome): void {
    this.seat = welcome.seat;
    this.rules = rulesFrom(welcome.config?.rules);
    this.passLocksOut = welcome.config?.rules?.passLocksOut ?? false;
  }

  onSnapshot(snapshot: Snapshot): void {
    const st = snapshot.state;
    this.handNumber = st?.handNumber ?? 0;
    this.hand = [...snapshot.hand];
    this.cardCounts = st?.cardCounts.length ? [...st.cardCounts] : [0, 0, 0, 0];
    this.playedCards = [...(st?.playedCards ?? [])];
    this.trick = (st?.trick ?? []).map((t) => ({ seat: t.seat, cards: t.pass ? [] : [...(t.play?.cards ?? [])] }));
    this.table = [...(st?.table?.cards ?? [])];
    this.tableSeat = st?.tableSeat;
    this.lockedOut = st?.lockedOut.length ? [...st.lockedOut] : [false, false, false, false];
    this.revolution = st?.revolution ?? false;
    this.totals = st?.totals.length ? [...st.totals] : [0, 0, 0, 0];
    this.handsWon = st?.handsWon.length ? [...st.handsWon] : [0, 0, 0, 0];
  }

  onEvent(event: Event): void {
    const k = event.kind;
    if (k === undefined) return;
    switch (k.$case) {
      case "handDealt":
        this.handNumber = k.value.handNumber;
        this.cardCounts = [0, 0, 0, 0];
        for (const h of k.value.hands) {
          this.cardCounts[h.seat] = h.count;
          if (h.seat === this.seat) this.hand = [...h.cards];
        }
        this.playedCards = [];
        this.trick = [];
        this.table = [];
        this.tableSeat = undefined;
        this.revolution = false;
        this.lockedOut = [false, false, false, false];
        break;
      case "played": {
        const p = k.value;
        const cards = [...(p.play?.cards ?? [])];
        this.cardCounts[p.seat] = p.cardsLeft;
        this.playedCards = sortCards(this.rules, [...this.playedCards, ...cards]);
        this.trick.push({ seat: p.seat, cards });
        this.table = cards;
        this.tableSeat = p.seat;
        this.revolution = p.revolution;
        if (p.seat === this.seat) this.hand = this.hand.filter((c) => !cards.includes(c));
        break;
      }
      case "passed":
        this.trick.push({ seat: k.value.seat, cards: [] });
        if (this.passLocksOut && !k.value.forcedLeadPass) this.lockedOut[k.value.seat] = true;
        break;
      case "trickCleared":
        this.trick = [];
        this.table = [];
        this.tableSeat = undefined;
        this.lockedOut = [false, false, false, false];
        break;
      case "handEnded":
        this.totals = [...k.value.totals];
        this.handsWon[k.value.winner] = (this.handsWon[k.value.winner] ?? 0) + 1;
        break;
      default:
        break;
    }
  }

  cardsLeft(seat: number): number {
    return this.cardCounts[seat] ?? 0;
  }
}

/** A Bot whose `tracker` follows the match; call `super` if you override a hook. */
export abstract class TrackingBot extends Bot {
  readonly tracker = new Tracker();

  onWelcome(welcome: Welcome): void {
    this.tracker.onWelcome(welcome);
  }

  onSnapshot(snapshot: Snapshot): void {
    this.tracker.onSnapshot(snapshot);
  }

  onEvent(event: Event): void {
    this.tracker.onEvent(event);
  }
}
