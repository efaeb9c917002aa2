  // -- the model: ops in, hands and positions out ---------------------------------------

  var M = {
    match: null, hands: [], prelude: [], end: null, lastSeq: 0,
    seats: ['seat 0', 'seat 1', 'seat 2', 'seat 3']
  };

  function lastHand() { return M.hands.length ? M.hands[M.hands.length - 1] : null; }

  function note(op) {
    var h = lastHand();
    if (h) h.notes[h.moves.length].push(op); else M.prelude.push(op);
  }

  function validSeat(s) { return typeof s === 'number' && s >= 0 && s < SEATS; }

  // A file beside the log with something per seat (a model's trace, the bots' output):
  // read(seat's object, its moves' lines by seq) for each seat that has one, else null.
  function perSeat(sidecar, read) {
    var out = [null, null, null, null];
    var seats = sidecar && Array.isArray(sidecar.seats) ? sidecar.seats : [];
    for (var s = 0; s < SEATS; s++) {
      var o = seats[s];
      if (!o || typeof o !== 'object') continue;
      var bySeq = {};
      (o.moves || []).forEach(function (entry) {
        if (Array.isArray(entry) && Array.isArray(entry[1])) bySeq[String(entry[0])] = entry[1];
      });
      out[s] = read(o, bySeq);
    }
    return out;
  }

  // What perSeat's table holds for move m (its lines), if the seat in view may see it.
  function linesAt(table, m) {
    var t = validSeat(m.seat) ? table[m.seat] : null;
    if (!t || !sees(m.seat)) return null;
    var lines = t.bySeq[String(m.seq)];
    return lines && lines.length ? lines : null;
  }

  function ingest(op) {
    if (!op || typeof op !== 'object') return;
    if (typeof op.seq === 'number' && op.seq > M.lastSeq) M.lastSeq = op.seq;
    var h = lastHand();
    switch (op.t) {
      case 'match':
        M.match = op;
        if (Array.isArray(op.seats)) M.seats = op.seats.slice(0, SEATS).map(String);
        break;
      case 'deal': {
        var before = [0, 0, 0, 0];
        if (h) before = (h.end ? h.end.totals : h.totalsBefore).slice();
        M.hands.push({
          index: M.hands.length, deal: op, moves: [], end: null, totalsBefore: before,
          notes: [M.hands.length === 0 ? M.prelude : []]
        });
        break;
      }
      case 'move':
        if (h && validSeat(op.seat)) { h.moves.push(op); h.notes.push([]); } else note(op);
        break;
      case 'clear':
        if (h && h.moves.length) h.moves[h.moves.length - 1].cleared = { leader: op.leader };
        else note(op);
        break;
      case 'hand_end':
        if (h) h.end = op; else note(op);
        break;
      case 'end':
        M.end = op;
        break;
      case 'trailer':
        M.trailer = op;
        break;
      default:
        note(op);
    }
  }

  function positionCount() {
    var n = 0;
    M.hands.forEach(function (h) { n += h.moves.length + 1; });
    return Math.max(n, 1);
  }

  function toPos(h, k) {
    var p = 0;
    for (var i = 0; i < h && i < M.hands.length; i++) p += M.hands[i].moves.length + 1;
    return p + k;
  }

  function fromPos(p) {
    if (!M.hands.length) return [-1, 0];
    for (var i = 0; i < M.hands.length; i++) {
      var n = M.hands[i].moves.length + 1;
      if (p < n) return [i, Math.max(0, p)];
      p -= n;
    }
    var last = M.hands.length - 1;
    return [last, M.hands[last].moves.length];
  }

  // The state of hand h after its first k moves: a fold of recorded facts only.
  function stateAt(h, k) {
    var H = M.hands[h];
    var d = H.deal;
    var st = {
      H: H, k: k, trick: [], locked: [false, false, false, false], rev: false, wonBy: null,
      cards: Array.isArray(d.cards) ? d.cards.map(function (a) { return a.slice(); }) : null,
      counts: Array.isArray(d.counts) ? d.counts.slice() : [13, 13, 13, 13]
    };
    for (var i = 0; i < k; i++) {
      var m = H.moves[i];
      if (!m.pass) {
        var played = m.cards || [];
        if (st.cards) {
          st.cards[m.seat] = st.cards[m.seat].filter(function (c) { return played.indexOf(c) < 0; });
        }
        st.counts[m.seat] = m.left;
        st.rev = !!m.rev;
      }
      st.trick.push(m);
      st.wonBy = null;
      if (m.locks) st.locked[m.seat] = true;
      if (m.cleared) {
        st.trick = [];
        st.locked = [false, false, false, false];
        st.wonBy = m.cleared.leader;
      }
    }
    st.next = k < H.moves.length ? H.moves[k] : null;
    st.over = !st.next && !!H.end;
    st.toAct = st.next ? st.next.seat : (H.end ? null : pendingTurn(H, k));
    st.totals = st.over ? H.end.totals : H.totalsBefore;
    return st;
  }

  // Who is to act at the live edge: the last prompt, else whoever leads.
  function pendingTurn(H, k) {
    var notes = H.notes[k] || [];
    for (var i = notes.length - 1; i >= 0; i--) {
      if (notes[i].t === 'turn' && validSeat(notes[i].seat)) return notes[i].seat;
    }
    if (k === 0) return H.deal.leader;
    var prev = H.moves[k - 1];
    if (prev && prev.cleared) return prev.cleared.leader;
    return null;
  }

  // Connection, bot names, strikes and time banks of each seat up to a position (after
  // the first k moves of hand h, and the events up to the next move).
  function seatFacts(h, k) {
    var bank0 = M.match && M.match.time ? Number(M.match.time.time_bank_ms) || 0 : 0;
    var f = {
      on: [false, false, false, false], bot: ['', '', '', ''], strikes: [0, 0, 0, 0],
      cause: ['', '', '', ''], gone: [false, false, false, false],
      bank: [bank0, bank0, bank0, bank0], prompt: [null, null, null, null]
    };
    function seen(op) {
      if (op.t === 'seat' && validSeat(op.seat)) {
        f.on[op.seat] = !!op.on;
        if (op.on && op.bot) f.bot[op.seat] = op.bot;
        f.cause[op.seat] = op.on ? '' : String(op.cause || '');
        f.gone[op.seat] = !op.on && !!op.gone;
      } else if (op.t === 'turn' && validSeat(op.seat)) {
        if (typeof op.bank === 'number') f.bank[op.seat] = op.bank;
        f.prompt[op.seat] = op;
      }
    }
    M.prelude.forEach(seen);
    for (var i = 0; i <= h && i < M.hands.length; i++) {
      var H = M.hands[i];
      var upto = i < h ? H.moves.length : k;
      for (var j = 0; j <= upto; j++) {
        if (i > 0 || j > 0) (H.notes[j] || []).forEach(seen);
        if (j < upto) {
          var m = H.moves[j];
          f.strikes[m.seat] = m.strikes || 0;
          if (typeof m.bank === 'number') f.bank[m.seat] = m.bank;
          f.prompt[m.seat] = null;
        }
      }
    }
    return f;
  }

