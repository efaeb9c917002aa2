// Built from referee/view/assets/viewer/*.js by scripts/build_viewer.py: edit those parts.
// The match viewer: draws the ops that `referee view` (or the live feed) folded from a
// match's events. It applies no rules of its own: legal plays, combination names and
// lock-outs come in the data. Every string from the data is set with textContent.
(function () {
  'use strict';

  var SEATS = 4;
  var PLACES = ['bottom', 'left', 'top', 'right'];
  var SUITS = { C: '\u2663', S: '\u2660', H: '\u2665', D: '\u2666' };
  var SUIT_NAMES = { C: 'clubs', S: 'spades', H: 'hearts', D: 'diamonds' };
  var RANK_NAMES = {
    '3': '3', '4': '4', '5': '5', '6': '6', '7': '7', '8': '8', '9': '9', T: '10',
    J: 'jack', Q: 'queen', K: 'king', A: 'ace', '2': '2'
  };
  var CAUSES = {
    timeout: 'timed out', illegal_attempts: 'too many rejected attempts',
    disconnected: 'not connected', strike_limit: 'strike limit reached'
  };
  var COLORS = ['#1f5fa8', '#b3261e', '#2a7a2a', '#7a3fa0'];
  var DASHES = ['', '7 4', '2 3', '10 3 2 3'];

  var data = JSON.parse(document.getElementById('viewer-data').textContent);

  // -- small DOM helpers (no markup from strings, ever) ---------------------------------

  function $(id) { return document.getElementById(id); }

  // Control and direction-override characters are shown as symbols, never obeyed.
  function clean(value) {
    var s = value === undefined || value === null ? '' : String(value);
    return s.replace(/[\u0000-\u001f\u007f]/g, function (c) {
      return String.fromCharCode(c.charCodeAt(0) === 0x7f ? 0x2421 : 0x2400 + c.charCodeAt(0));
    }).replace(/[\u202a-\u202e\u2066-\u2069\u200e\u200f]/g, '\ufffd');
  }

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = clean(text);
    return node;
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
    return node;
  }

  function svg(tag, attrs) {
    var node = document.createElementNS('http://www.w3.org/2000/svg', tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, String(attrs[k])); });
    return node;
  }

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

  // -- view state -----------------------------------------------------------------------

  var V = {
    h: -1, k: 0, seat: 'all', timer: null, follow: !!data.live, drawnPanels: '', drawnTimeline: '',
    clockOffset: 0
  };

  function seatName(s) {
    return validSeat(s) ? 'seat ' + s + ' ' + M.seats[s] : 'seat ?';
  }

  function sees(s) { return V.seat === 'all' || V.seat === s; }

  // -- cards ----------------------------------------------------------------------------

  function cardNode(c) {
    var text = String(c);
    var rank = text.slice(0, -1);
    var suit = text.slice(-1);
    var node = el('span', 'card');
    if (SUITS[suit] && RANK_NAMES[rank]) {
      node.classList.add(suit === 'H' || suit === 'D' ? 'red' : 'black');
      node.setAttribute('data-card', text);
      node.setAttribute('aria-label', RANK_NAMES[rank] + ' of ' + SUIT_NAMES[suit]);
      node.setAttribute('title', RANK_NAMES[rank] + ' of ' + SUIT_NAMES[suit]);
      node.appendChild(el('span', 'rank', rank === 'T' ? '10' : rank));
      node.appendChild(el('span', 'suit', SUITS[suit]));
    } else {
      node.classList.add('odd');
      node.textContent = clean(text);
    }
    return node;
  }

  // A card named in a sentence ("3\u2663"): not drawn, so not one of the cards on show.
  function cardText(c) {
    var text = String(c);
    var rank = text.slice(0, -1);
    var suit = text.slice(-1);
    return SUITS[suit] && RANK_NAMES[rank] ? (rank === 'T' ? '10' : rank) + SUITS[suit] : text;
  }

  function cardRow(cards, cls) {
    var row = el('span', 'cards' + (cls ? ' ' + cls : ''));
    (cards || []).forEach(function (c) { row.appendChild(cardNode(c)); });
    return row;
  }

  function backs(n) {
    var row = el('span', 'cards backs');
    var count = Math.max(0, Math.min(n || 0, 13));
    for (var i = 0; i < count; i++) {
      var b = el('span', 'card back');
      b.setAttribute('aria-hidden', 'true');
      row.appendChild(b);
    }
    row.setAttribute('aria-label', (n || 0) + ' hidden cards');
    return row;
  }

  // -- drawing --------------------------------------------------------------------------

  function secs(ms) {
    ms = Number(ms) || 0;
    if (Math.abs(ms) < 1000) return Math.round(ms) + ' ms';
    return (ms / 1000).toFixed(ms < 10000 ? 1 : 0) + ' s';
  }

  function render() {
    var n = positionCount();
    var scrub = $('scrubber');
    scrub.max = String(n - 1);
    var pos = M.hands.length ? toPos(V.h, V.k) : 0;
    scrub.value = String(pos);
    var table = $('table');
    table.setAttribute('data-last-seq', String(M.lastSeq));
    var st = null;
    if (!M.hands.length) {
      renderEmpty();
    } else {
      st = stateAt(V.h, V.k);
      var facts = seatFacts(V.h, V.k);
      table.setAttribute('data-hand', String(st.H.deal.hand));
      table.setAttribute('data-move', String(V.k));
      table.setAttribute('data-to-act', st.toAct === null || st.toAct === undefined ? '' : String(st.toAct));
      renderSeats(st, facts);
      renderCenter(st);
      renderTurn(st, facts);
      renderNotes(st);
      renderMoves(st);
      renderPosition(st);
    }
    var key = [V.h, V.seat, M.hands.length, M.lastSeq, st ? st.over : 0].join('/');
    if (key !== V.drawnPanels) {
      V.drawnPanels = key;
      renderHands();
      renderChart();
      renderStandings();
      renderProof();
    }
    var tkey = [V.seat, M.hands.length, M.lastSeq].join('/');
    if (tkey !== V.drawnTimeline) {
      V.drawnTimeline = tkey;
      renderTimeline();
      renderOutputPanel();
    }
    markTimeline(pos);
    writeHash();
  }

  function renderEmpty() {
    var table = $('table');
    table.setAttribute('data-hand', '0');
    table.setAttribute('data-move', '0');
    table.setAttribute('data-to-act', '');
    var facts = seatFacts(-1, 0);
    for (var s = 0; s < SEATS; s++) {
      var box = seatBox(s);
      box.appendChild(seatHeader(s, facts));
      box.appendChild(seatWhy(s, facts));
    }
    var center = clear($('center'));
    center.appendChild(el('p', 'muted', M.end ? 'The match ended before any hand was dealt.' : 'No hand has been dealt yet.'));
    var turn = clear($('turn'));
    turn.appendChild(el('h2', '', M.end ? 'No hand was played' : 'Waiting for the first deal'));
    renderNotesList(M.prelude);
    clear($('moves'));
    $('position').textContent = 'Before the first deal';
  }

  function seatBox(s) {
    var bottom = V.seat === 'all' ? 0 : V.seat;
    var place = PLACES[(s - bottom + SEATS) % SEATS];
    var box = document.querySelector('.seat[data-place="' + place + '"]');
    clear(box);
    box.className = 'seat';
    box.setAttribute('data-seat', String(s));
    return box;
  }

  function seatHeader(s, facts) {
    var head = el('div', 'who');
    head.appendChild(el('span', 'seatno', 'Seat ' + s));
    head.appendChild(el('span', 'name', M.seats[s]));
    if (facts.bot[s] && facts.bot[s] !== M.seats[s]) head.appendChild(el('span', 'bot', facts.bot[s]));
    if (facts.gone[s]) head.appendChild(el('span', 'badge crash', 'crashed'));
    else if (!facts.on[s]) head.appendChild(el('span', 'badge away', 'not connected'));
    return head;
  }

  // Why a seat is not connected, as the log says ("its bot exited with status 1").
  function seatWhy(s, facts) {
    var why = el('div', 'why' + (facts.gone[s] ? ' gone' : ''));
    if (!facts.on[s] && facts.cause[s]) why.textContent = clean(facts.cause[s]);
    why.hidden = !why.textContent;
    return why;
  }

  function banked() {
    var t = M.match && M.match.time ? M.match.time : {};
    return (Number(t.time_bank_ms) || 0) > 0;
  }

  function turnMs(prompt) {
    if (prompt && prompt.turn_ms) return prompt.turn_ms;
    var t = M.match && M.match.time ? M.match.time : {};
    return Number(t.turn_time_ms) || 5000;
  }

  function renderSeats(st, facts) {
    for (var s = 0; s < SEATS; s++) {
      var box = seatBox(s);
      box.setAttribute('data-count', String(st.counts[s]));
      box.setAttribute('data-total', String(st.totals[s]));
      if (st.toAct === s) box.classList.add('acting');
      if (facts.gone[s]) box.classList.add('gone');
      box.appendChild(seatHeader(s, facts));
      var line = el('div', 'facts');
      line.appendChild(el('span', 'count', st.counts[s] + (st.counts[s] === 1 ? ' card' : ' cards')));
      line.appendChild(el('span', 'total', 'total ' + st.totals[s]));
      if (facts.strikes[s]) line.appendChild(el('span', 'strikes', 'strikes ' + facts.strikes[s]));
      if (banked()) {
        var bank = el('span', 'bank', 'bank ' + secs(facts.bank[s]));
        bank.setAttribute('data-bank', String(facts.bank[s]));
        line.appendChild(bank);
      }
      if (st.toAct === s) line.appendChild(el('span', 'badge act', 'to act'));
      var passed = st.trick.some(function (m) { return m.seat === s && m.pass; });
      if (st.locked[s]) line.appendChild(el('span', 'badge locked', 'locked out'));
      else if (passed) line.appendChild(el('span', 'badge passed', 'passed'));
      if (st.over && st.H.end.winner === s) line.appendChild(el('span', 'badge won', 'won the hand'));
      box.appendChild(line);
      box.appendChild(seatWhy(s, facts));
      var hand = el('div', 'hand');
      if (st.over) {
        var left = st.H.end.cards[s] || [];
        if (left.length) hand.appendChild(cardRow(left, 'revealed'));
        else hand.appendChild(el('span', 'muted', 'out'));
      } else if (st.cards && sees(s)) {
        hand.appendChild(cardRow(st.cards[s], 'own'));
      } else {
        hand.appendChild(backs(st.counts[s]));
      }
      box.appendChild(hand);
    }
  }

  function playLine(m) {
    var row = el('li', 'play');
    row.setAttribute('data-seat', String(m.seat));
    var who = el('span', 'who', seatName(m.seat));
    who.setAttribute('title', clean(seatName(m.seat)));
    row.appendChild(who);
    if (m.pass) {
      row.appendChild(el('span', 'pass', m.forced ? 'pass (forced: a lone 2 cannot go out)' : 'pass'));
    } else {
      row.appendChild(cardRow(m.cards));
      row.appendChild(el('span', 'label', m.label || m.kind));
    }
    if (m.cause) row.appendChild(el('span', 'badge default', 'default: ' + (CAUSES[m.cause] || m.cause)));
    if (typeof m.ms === 'number') row.appendChild(el('span', 'ms', secs(m.ms)));
    return row;
  }

  function renderCenter(st) {
    var center = clear($('center'));
    var H = st.H;
    var head = el('div', 'center-head');
    head.appendChild(el('span', 'hand-no', 'Hand ' + H.deal.hand));
    if (st.rev) head.appendChild(el('span', 'badge rev', 'revolution: ranks inverted'));
    center.appendChild(head);
    if (st.over) {
      var end = H.end;
      center.appendChild(el('p', 'won', seatName(end.winner) + ' goes out and wins the hand'));
      var final = H.moves[H.moves.length - 1];
      if (final && !final.pass) {
        var out = el('div', 'on-table');
        out.setAttribute('data-seat', String(final.seat));
        out.appendChild(cardRow(final.cards, 'big'));
        out.appendChild(el('div', 'label', final.label || final.kind));
        center.appendChild(out);
      }
      var list = el('ul', 'scores');
      for (var s = 0; s < SEATS; s++) {
        var score = end.scores[s];
        list.appendChild(el('li', '', seatName(s) + ': ' + (score > 0 ? '+' : '') + score +
          ' (' + (end.cards[s] || []).length + ' left), total ' + end.totals[s]));
      }
      center.appendChild(list);
      if (M.end && V.h === M.hands.length - 1) center.appendChild(matchOver());
      return;
    }
    if (!st.trick.length) {
      if (st.k === 0) {
        var lead = 'Dealt. ' + seatName(H.deal.leader) + ' leads';
        if (H.deal.must) lead += ', and the first play must include ' + cardText(H.deal.must);
        center.appendChild(el('p', 'lead', lead));
      } else if (st.wonBy !== null && st.wonBy !== undefined) {
        center.appendChild(el('p', 'lead', seatName(st.wonBy) + ' wins the trick and leads'));
      } else {
        center.appendChild(el('p', 'muted', 'A fresh lead'));
      }
      if (!H.end && !st.next && M.end) center.appendChild(matchOver());
      return;
    }
    var top = null;
    st.trick.forEach(function (m) { if (!m.pass) top = m; });
    if (top) {
      var onTable = el('div', 'on-table');
      onTable.setAttribute('data-seat', String(top.seat));
      onTable.appendChild(cardRow(top.cards, 'big'));
      onTable.appendChild(el('div', 'label', top.label || top.kind));
      onTable.appendChild(el('div', 'muted', 'by ' + seatName(top.seat)));
      center.appendChild(onTable);
    }
    var trick = el('ol', 'trick');
    trick.setAttribute('aria-label', 'This trick');
    st.trick.forEach(function (m, i) {
      var row = playLine(m);
      if (i === st.trick.length - 1) row.classList.add('latest');
      trick.appendChild(row);
    });
    center.appendChild(trick);
    requestAnimationFrame(function () {
      trick.scrollTop = trick.scrollHeight;
      trick.classList.toggle('more', trick.scrollHeight > trick.clientHeight + 1);
    });
  }

  function matchOver() {
    var box = el('div', 'match-over');
    var status = M.end.status === 'finished' ? 'Match finished' : 'Match ' + (M.end.status || 'ended');
    box.appendChild(el('strong', '', status + (M.end.reason ? ': ' + M.end.reason : '')));
    return box;
  }

  function decode(bits, cards) {
    var out = [];
    for (var i = 0; i < cards.length; i++) if (bits & (1 << i)) out.push(cards[i]);
    return out;
  }

  // The moment "after move k": the panel tells move k (who, what, how long, what else it
  // could have played, what it tried first, what it printed), then who is to act next.
  function renderTurn(st, facts) {
    var panel = clear($('turn'));
    var H = st.H;
    var k = st.k;
    var m = k > 0 ? H.moves[k - 1] : null;
    if (!m) {
      panel.appendChild(el('h2', '', 'Hand ' + H.deal.hand + ': dealt'));
      var lead = seatName(H.deal.leader) + ' leads';
      if (H.deal.must) lead += '; the first play must include ' + cardText(H.deal.must);
      panel.appendChild(el('p', '', lead + '.'));
    } else {
      var title = el('h2', 'move-title');
      title.appendChild(el('span', 'move-no', 'Move ' + k + ofMoves(H)));
      title.appendChild(el('span', '', ' \u00b7 ' + seatName(m.seat)));
      panel.appendChild(title);
      describeMove(panel, st, m, k);
    }
    if (st.over) {
      panel.appendChild(el('p', 'done', 'Hand ' + H.deal.hand + ' is over: ' + seatName(H.end.winner) + ' went out.'));
    } else if (validSeat(st.toAct)) {
      panel.appendChild(nextTurn(st, facts));
    } else if (!st.next) {
      panel.appendChild(el('p', 'muted', data.live ? 'Waiting for the next event.' : 'The log ends here.'));
    }
    if (atEnd()) endOutput(panel);
  }

  function describeMove(panel, st, m, k) {
    var H = st.H;
    var chose = el('p', 'chose');
    if (m.pass) {
      chose.appendChild(el('span', '', m.forced ? 'Passed (forced: a lone 2 cannot go out)' : 'Passed'));
    } else {
      chose.appendChild(el('span', '', 'Played '));
      chose.appendChild(cardRow(m.cards));
      chose.appendChild(el('span', 'label', m.label || m.kind));
    }
    panel.appendChild(chose);
    panel.appendChild(moveClock(m, k));
    if (m.cause) {
      panel.appendChild(el('p', 'warn', 'The referee acted for it: ' + (CAUSES[m.cause] || m.cause) +
        (m.strikes ? ' (strikes: ' + m.strikes + ')' : '')));
    }
    if (!sees(m.seat)) return;
    var raised = raisedAt(m);
    if (raised) {
      panel.appendChild(el('p', 'warn raised', "The bot's code raised at move " + k + ': ' + raised +
        '; its kit played the fallback'));
    }
    var rejects = (H.notes[k - 1] || []).filter(function (o) { return isAttempt(o, m); });
    if (rejects.length) {
      panel.appendChild(el('h3', '', 'Rejected attempts'));
      var list = el('ol', 'rejects');
      rejects.forEach(function (r) { list.appendChild(rejectLine(r, false)); });
      panel.appendChild(list);
    }
    if (m.illegal) panel.appendChild(el('p', 'bad', 'The rules engine does not accept this move: ' + m.illegal));
    var lines = outputOf(m);
    if (lines) panel.appendChild(outputBox('Its output before this move', lines));
    var model = traceOf(m);
    if (model) panel.appendChild(modelBox(model, m.seat));
    var before = stateAt(V.h, k - 1);
    var legal = m.legal;
    var cards = before.cards ? before.cards[m.seat] : null;
    if (!legal || !cards) {
      panel.appendChild(el('p', 'muted small', 'Legal plays: not known here (the cards are hidden, or the log broke the rules earlier in this hand).'));
      return;
    }
    var total = 0;
    Object.keys(legal.plays).forEach(function (g) { total += legal.plays[g].length; });
    var head = total + (total === 1 ? ' legal play' : ' legal plays') + (legal.pass ? ', or pass' : '');
    if (!total) head = legal.pass ? 'No legal play: pass' : 'No legal play';
    var details = el('details', 'legal');
    details.open = total <= 12;
    details.appendChild(el('summary', '', head));
    var chosen = m.pass ? null : (m.cards || []).slice().sort().join(' ');
    Object.keys(legal.plays).forEach(function (kind) {
      var group = el('div', 'group');
      group.appendChild(el('span', 'kind', kind + ' (' + legal.plays[kind].length + ')'));
      legal.plays[kind].forEach(function (bits) {
        var play = decode(bits, cards);
        var row = cardRow(play, 'option');
        if (chosen !== null && play.slice().sort().join(' ') === chosen) {
          row.classList.add('chosen');
          row.setAttribute('title', 'its choice');
        }
        group.appendChild(row);
      });
      details.appendChild(group);
    });
    panel.appendChild(details);
  }

  // How long the move took against the seat's clock: its turn time, then its bank.
  function moveClock(m, k) {
    var line = el('p', 'clock-line');
    var prompt = promptFor(k - 1, m);
    var turn = turnMs(prompt);
    var bar = el('span', 'clock-bar');
    var bank = prompt && typeof prompt.bank === 'number' ? prompt.bank : 0;
    var whole = turn + bank;
    var used = el('span', 'used' + (m.cause === 'timeout' ? ' over' : m.ms > turn ? ' banked' : ''));
    used.style.width = Math.min(100, 100 * (m.ms || 0) / Math.max(whole, 1)).toFixed(1) + '%';
    bar.appendChild(used);
    if (bank) {
      var mark = el('span', 'turn-end');
      mark.style.left = (100 * turn / whole).toFixed(1) + '%';
      bar.appendChild(mark);
    }
    line.appendChild(bar);
    var words = (m.cause === 'timeout' ? 'timed out after ' : 'took ') + secs(m.ms) + ' of its ' + secs(turn) + ' turn';
    if (bank) words += ' + ' + secs(bank) + ' bank';
    if (typeof m.bank === 'number' && prompt && m.bank !== bank) words += '; bank left ' + secs(m.bank);
    if (!prompt && m.cause === 'disconnected') words = 'not connected: played for it after ' + secs(m.ms);
    line.appendChild(el('span', 'clock-text', words));
    return line;
  }

  // The prompt (turn op) of the move after the first j moves of the current hand.
  function promptFor(j, m) {
    var notes = M.hands[V.h].notes[j] || [];
    for (var i = notes.length - 1; i >= 0; i--) {
      var op = notes[i];
      if (op.t === 'turn' && op.seat === m.seat && (!m.turn || op.turn === m.turn)) return op;
    }
    return null;
  }

  function nextTurn(st, facts) {
    var box = el('div', 'next');
    var s = st.toAct;
    var head = el('p', 'next-head');
    head.appendChild(el('span', 'badge act', 'next'));
    head.appendChild(el('span', '', ' ' + seatName(s) + ' to act'));
    box.appendChild(head);
    var prompt = facts.prompt[s];
    if (!facts.on[s]) {
      box.appendChild(el('p', 'muted small', (facts.gone[s] ? 'Its bot is gone' : 'Not connected') +
        ': the referee plays its turn by default.'));
    }
    var clock = el('p', 'clock');
    clock.id = 'clock';
    var turn = turnMs(prompt);
    var bank = prompt ? prompt.bank || 0 : facts.bank[s];
    clock.setAttribute('data-turn-ms', String(turn));
    clock.setAttribute('data-bank', String(bank));
    if (prompt && typeof prompt.deadline === 'number' && data.live && !st.next) {
      clock.setAttribute('data-deadline', String(prompt.deadline));
      clock.classList.add('ticking');
    }
    clock.appendChild(clockIcon());
    clock.appendChild(el('span', 'clock-text', secs(turn) + ' turn' + (bank ? ' + ' + secs(bank) + ' bank' : '')));
    box.appendChild(clock);
    if (!st.next && sees(s)) {
      var tried = (st.H.notes[st.k] || []).filter(function (o) {
        return o.t === 'reject' && o.attempt > 0 && !o.late && o.seat === s;
      });
      if (tried.length) {
        var list = el('ol', 'rejects');
        tried.forEach(function (r) { list.appendChild(rejectLine(r, false)); });
        box.appendChild(list);
      }
    }
    tickClock();
    return box;
  }

  // The live page's turn clock: the deadline is the server's, its clock offset is known
  // from the event stream (``clock`` events), so the count is right on any device.
  function tickClock() {
    var clock = $('clock');
    if (!clock || !clock.classList.contains('ticking')) return;
    var deadline = Number(clock.getAttribute('data-deadline'));
    var bank = Number(clock.getAttribute('data-bank')) || 0;
    var now = Date.now() + V.clockOffset;
    var left = deadline - now;
    // A clock offset measured under load can be off by a little: never show more than a turn.
    var turn = Number(clock.getAttribute('data-turn-ms')) || 0;
    if (turn > 0 && left > turn) left = turn;
    var text;
    if (left > 0) {
      text = (left / 1000).toFixed(1) + ' s left' + (bank ? ' + ' + secs(bank) + ' bank' : '');
    } else if (bank + left > 0) {
      text = 'in its bank: ' + ((bank + left) / 1000).toFixed(1) + ' s left';
    } else {
      text = 'out of time: the referee acts for it';
    }
    clock.setAttribute('data-left', String(Math.round(left)));
    clock.classList.toggle('low', left < 1000);
    var words = clock.querySelector('.clock-text');
    if (words) words.textContent = text;
  }

  function clockIcon() {
    var icon = svg('svg', { viewBox: '0 0 16 16', width: 15, height: 15, class: 'clock-icon', 'aria-hidden': 'true' });
    icon.appendChild(svg('circle', { cx: 8, cy: 9, r: 6, fill: 'none', stroke: 'currentColor', 'stroke-width': 1.8 }));
    icon.appendChild(svg('path', { d: 'M8 5.5V9l2.4 1.6M6 1.5h4', fill: 'none', stroke: 'currentColor', 'stroke-width': 1.8, 'stroke-linecap': 'round' }));
    return icon;
  }

  function rejectLine(r, named) {
    var li = el('li', 'reject');
    if (named) li.appendChild(el('span', 'who', seatName(r.seat)));
    li.appendChild(el('span', '', r.pass ? 'pass' : ''));
    if (!r.pass) {
      // As sent, in words: an attempt is not a card on show (it may name anyone's card).
      if (r.cards && r.cards.length) li.appendChild(el('span', 'tried', r.cards.map(cardText).join(' ')));
      else li.appendChild(el('span', 'muted', '(no cards)'));
    }
    if (r.late) li.appendChild(el('span', 'badge default', 'late: its turn had timed out'));
    li.appendChild(el('span', 'reason', (r.reason || '').replace(/_/g, ' ')));
    li.appendChild(el('span', 'message', r.message));
    if (r.ms) li.appendChild(el('span', 'ms', secs(r.ms)));
    return li;
  }

  function noteLine(op) {
    var li = el('li', 'note');
    li.setAttribute('data-kind', String(op.t));
    if (op.t === 'seat') {
      if (op.on) {
        li.textContent = clean(seatName(op.seat) + (op.reconnect ? ' reconnected' : ' connected') +
          (op.bot ? ' (bot: ' + op.bot + ')' : ''));
      } else if (op.gone) {
        li.className = 'note crash';
        li.textContent = clean(seatName(op.seat) + ' crashed: ' + op.cause);
      } else {
        li.textContent = clean(seatName(op.seat) + ' disconnected: ' + op.cause);
      }
    } else if (op.t === 'reject') {
      li.appendChild(el('span', '', op.attempt > 0 && !op.late ? 'Rejected: ' : 'Answering no prompt in force: '));
      li.appendChild(rejectLine(op, true));
    } else if (op.t === 'restart') {
      li.className = 'note restart';
      li.textContent = clean('The referee restarted here and resumed the match (version ' + op.software +
        (op.cut ? '; ' + op.cut + (op.cut === 1 ? ' entry' : ' entries') + ' of an unfinished decision ' +
          (op.cut === 1 ? 'was' : 'were') + ' cut' : '') +
        (op.torn ? '; ' + op.torn + ' bytes of a torn last line were cut' : '') + ')');
    } else if (op.t === 'other') {
      li.textContent = clean('Event "' + op.kind + '" (line ' + op.seq + '): ' + op.text);
    } else if (op.t === 'bad') {
      li.className = 'note bad';
      li.textContent = clean('Line ' + op.seq + ': ' + op.problem);
    } else if (op.t === 'move' || op.t === 'clear' || op.t === 'hand_end') {
      li.textContent = clean('Line ' + op.seq + ': a ' + op.t + ' event outside a hand');
    } else {
      return null;
    }
    return li;
  }

  function renderNotesList(notes, skip) {
    var panel = $('notes');
    clear(panel);
    var list = el('ul', 'notes-list');
    (notes || []).forEach(function (op) {
      if (skip && skip(op)) return;
      if (op.t === 'reject' && !sees(op.seat)) return;
      var li = noteLine(op);
      if (li) list.appendChild(li);
    });
    panel.hidden = !list.childNodes.length;
    if (list.childNodes.length) {
      panel.appendChild(el('h2', '', 'Events here'));
      panel.appendChild(list);
    }
  }

  // A rejected attempt at that very turn (the others answered no prompt: out of turn, late).
  function isAttempt(op, move) {
    return op.t === 'reject' && !!move && op.seat === move.seat && op.turn === move.turn && !op.late;
  }

  // What happened after move k and before the next: connections, disconnections, other
  // events. The next move's own attempts are told with it; a pending one's, in its turn.
  function renderNotes(st) {
    var next = st.next;
    renderNotesList(st.H.notes[st.k], function (op) {
      if (isAttempt(op, next)) return true;
      return !next && op.t === 'reject' && op.attempt > 0 && !op.late && op.seat === st.toAct;
    });
  }

  // The moves of this hand so far, oldest first; each one a link to its moment.
  function renderMoves(st) {
    var list = clear($('moves'));
    var H = st.H;
    $('moves-title').textContent = 'Moves of hand ' + H.deal.hand;
    var trick = 1;
    for (var i = 0; i < st.k; i++) {
      var m = H.moves[i];
      var row = playLine(m);
      row.classList.add('move');
      if (i === st.k - 1) row.classList.add('latest');
      var go = el('button', 'link num', String(i + 1));
      go.setAttribute('aria-label', 'Go to move ' + (i + 1));
      go.addEventListener('click', (function (h, k) { return function () { stop(); goTo(h, k); }; })(V.h, i + 1));
      row.insertBefore(go, row.firstChild);
      row.setAttribute('data-trick', String(trick));
      var lines = outputOf(m);
      if (lines) {
        var said = el('div', 'said');
        said.setAttribute('title', lines.length + ' line' + (lines.length === 1 ? '' : 's') + ' of its output before this move');
        if (lines.length > 1) said.appendChild(el('span', 'badge out', lines.length + ' lines'));
        said.appendChild(el('span', 'mono', lines[lines.length - 1][1]));
        row.appendChild(said);
      }
      if (m.cleared) { trick++; row.classList.add('trick-end'); }
      list.appendChild(row);
    }
    if (!st.k) list.appendChild(el('li', 'muted', 'No move yet.'));
    // Scroll once the frame is laid out (reading its height now would force a layout).
    requestAnimationFrame(function () { list.scrollTop = list.scrollHeight; });
  }

  function renderPosition(st) {
    var H = st.H;
    var trick = 1;
    for (var i = 0; i < st.k; i++) if (H.moves[i].cleared && i < st.k - 1) trick++;
    var text = 'Hand ' + H.deal.hand + ' of ' + M.hands.length + ' \u00b7 ';
    text += st.k ? 'move ' + st.k + ofMoves(H) : 'dealt' + (live(H) ? '' : ', ' + H.moves.length + ' moves');
    if (st.over) text += ' \u00b7 hand over';
    else if (st.k) text += ' \u00b7 trick ' + trick;
    $('position').textContent = text;
  }

  // A hand still being played live has no move count yet.
  function live(H) { return !!data.live && !H.end; }

  function ofMoves(H) { return live(H) ? '' : ' of ' + H.moves.length; }

  // -- the timeline: where the things worth finding happened ----------------------------

  var MARKS = {
    hand: 'hand end', crash: 'crash', timeout: 'timeout', reject: 'rejection', disconnect: 'disconnect',
    raised: 'raise'
  };

  function timelineMarks() {
    var marks = [];
    function add(p, kind, text) { marks.push({ p: p, kind: kind, text: text }); }
    M.hands.forEach(function (H, h) {
      var base = toPos(h, 0);
      for (var j = 0; j <= H.moves.length; j++) {
        var next = H.moves[j];
        (H.notes[j] || []).forEach(function (op) {
          if (op.t === 'seat' && !op.on && validSeat(op.seat)) {
            if (op.gone) add(base + j, 'crash', seatName(op.seat) + ' crashed: ' + op.cause);
            else add(base + j, 'disconnect', seatName(op.seat) + ' disconnected: ' + op.cause);
          } else if (op.t === 'reject' && validSeat(op.seat) && sees(op.seat)) {
            var at = isAttempt(op, next) ? base + j + 1 : base + j;
            add(at, 'reject', seatName(op.seat) + ': ' + (op.reason || '').replace(/_/g, ' '));
          }
        });
        if (next && raisedAt(next)) {
          add(base + j + 1, 'raised', seatName(next.seat) + ": the bot's code raised at hand " + H.deal.hand +
            ', move ' + (j + 1) + ': ' + raisedAt(next));
        }
        if (next && next.cause === 'timeout') {
          add(base + j + 1, 'timeout', seatName(next.seat) + ' timed out (hand ' + H.deal.hand + ', move ' + (j + 1) + ')');
        }
      }
      if (H.end) add(base + H.moves.length, 'hand', 'Hand ' + H.deal.hand + ' ends: ' + seatName(H.end.winner) + ' wins');
    });
    return marks;
  }

  function renderTimeline() {
    var line = clear($('timeline'));
    var key = clear($('timeline-key'));
    var last = Math.max(positionCount() - 1, 1);
    var groups = {};
    var counts = {};
    timelineMarks().forEach(function (mk) {
      var id = mk.kind + '@' + mk.p;
      counts[mk.kind] = (counts[mk.kind] || 0) + 1;
      if (groups[id]) { groups[id].text.push(mk.text); return; }
      groups[id] = { p: mk.p, kind: mk.kind, text: [mk.text] };
    });
    var order = ['hand', 'reject', 'disconnect', 'timeout', 'raised', 'crash'];
    Object.keys(groups).map(function (id) { return groups[id]; }).sort(function (a, b) {
      return order.indexOf(a.kind) - order.indexOf(b.kind) || a.p - b.p;
    }).forEach(function (g) {
      var b = el('button', 'mark');
      b.setAttribute('data-kind', g.kind);
      b.setAttribute('data-pos', String(g.p));
      b.style.left = (100 * g.p / last).toFixed(3) + '%';
      var words = g.text.join('; ');
      b.setAttribute('title', words);
      b.setAttribute('aria-label', MARKS[g.kind] + ': ' + words);
      b.addEventListener('click', function () { stop(); goPos(g.p); });
      line.appendChild(b);
    });
    order.slice().reverse().forEach(function (kind) {
      if (!counts[kind]) return;
      var li = el('li', 'key');
      li.setAttribute('data-kind', kind);
      var swatch = el('span', 'swatch');
      swatch.setAttribute('data-kind', kind);
      li.appendChild(swatch);
      li.appendChild(el('span', '', MARKS[kind] + (counts[kind] === 1 ? '' : 's') + ' ' + counts[kind]));
      key.appendChild(li);
    });
    key.hidden = !key.childNodes.length;
  }

  function markTimeline(p) {
    var marks = $('timeline').querySelectorAll('.mark');
    for (var i = 0; i < marks.length; i++) {
      marks[i].classList.toggle('here', Number(marks[i].getAttribute('data-pos')) === p);
    }
  }

  // -- a language model's trace (MATCH.seatN.trace.ndjson beside the log) ----------------

  var TRACE = perSeat(data.traces, function (t, bySeq) {
    return { bySeq: bySeq, file: String(t.file || ''), summary: t.summary || null };
  });

  function traceOf(m) { return linesAt(TRACE, m); }

  function modelText(cls, s) {
    // Line breaks kept (a model writes in lines); every other control character shown.
    var node = el('pre', 'mono ' + cls);
    node.textContent = String(s).split('\n').map(clean).join('\n');
    return node;
  }

  function modelCall(c, last) {
    var d = el('details', 'model-call');
    d.open = last;
    var head = 'Asked the model';
    if (c.parse) head += ': read as ' + c.parse;
    if (c.fault) head += ': ' + c.fault;
    if (c.ms) head += ' (' + (c.ms / 1000).toFixed(2) + ' s' + (c.tokens ? ', ' + c.tokens[0] + ' + ' + c.tokens[1] + ' tokens' : '') + ')';
    d.appendChild(el('summary', '', head));
    if (c.saw) { d.appendChild(el('h4', '', 'It saw')); d.appendChild(modelText('model-saw', c.saw)); }
    if (c.thought) { d.appendChild(el('h4', '', 'Its reasoning')); d.appendChild(modelText('model-thought', c.thought)); }
    d.appendChild(el('h4', '', 'It said'));
    d.appendChild(modelText('model-said', c.said || '(nothing)'));
    return d;
  }

  function modelSummary(sm) {
    // The seat's results clean (hands with no fault of the model's) beside raw.
    var n = function (v) { return typeof v === 'number' && isFinite(v) ? v : 0; };
    return el('p', 'muted small', 'Clean hands ' + n(sm.clean_hands) + '/' + n(sm.hands) + ': total ' +
      n(sm.clean_total) + ' clean, ' + n(sm.raw_total) + ' raw; ' + n(sm.first_try) + '/' + n(sm.turns) +
      ' turns right first time, ' + n(sm.rejections) + ' rejected, ' + n(sm.parse_faults) + ' unreadable, ' +
      n(sm.fallbacks) + ' fallbacks, ' + n(sm.provider_failures) + ' provider failures; tokens ' +
      n(sm.prompt_tokens) + ' in, ' + n(sm.completion_tokens) + ' out' + (n(sm.cost) ? ', est. cost ' + n(sm.cost) : ''));
  }

  function modelBox(lines, seat) {
    var box = el('div', 'model-trace');
    box.appendChild(el('h3', '', 'The model' + (lines[0].model ? ' (' + lines[0].model + ')' : '') + ': what it saw, said and played'));
    var sm = TRACE[seat] && TRACE[seat].summary;
    if (sm && typeof sm === 'object') box.appendChild(modelSummary(sm));
    lines.forEach(function (line, i) {
      var move = line.move && line.move.length ? line.move.join(' ') : 'pass';
      var head = (lines.length > 1 ? 'Move ' + (i + 1) + ' sent: ' : 'Move sent: ') + move;
      if (line.source === 'fallback') head += ' (sent by the seat itself: ' + (line.fault || 'no answer') + ')';
      box.appendChild(el('p', 'chose', head));
      var calls = line.calls || [];
      calls.forEach(function (c, j) { box.appendChild(modelCall(c, j === calls.length - 1)); });
    });
    return box;
  }

  // -- the bots' own output (referee view --with-stderr) ---------------------------------

  var OUT = perSeat(data.stderr, function (o, bySeq) {
    var raised = {};
    (Array.isArray(o.raised) ? o.raised : []).forEach(function (entry) {
      if (Array.isArray(entry) && typeof entry[1] === 'string') raised[String(entry[0])] = entry[1];
    });
    return {
      bySeq: bySeq, end: o.end || [], untimed: o.untimed || [], file: o.file || '',
      skipped: o.skipped || 0, lines: o.lines || 0, raised: raised
    };
  });

  // What the seat's kit said of this move: the bot's own code raised on its turn and the
  // kit played its fallback (docs/kits.md, section 5); null when it said nothing.
  function raisedAt(m) {
    var o = m && validSeat(m.seat) ? OUT[m.seat] : null;
    if (!o || !sees(m.seat)) return null;
    return o.raised[String(m.seq)] || null;
  }

  function outputOf(m) { return linesAt(OUT, m); }

  function outputBox(title, lines) {
    var box = el('div', 'output');
    box.appendChild(el('h3', '', title + ' (' + lines.length + (lines.length === 1 ? ' line)' : ' lines)')));
    var pre = el('ol', 'output-lines mono');
    lines.forEach(function (line) {
      var li = el('li');
      li.appendChild(el('span', 'at', (line[0] / 1000).toFixed(3) + ' s'));
      li.appendChild(el('span', 'text', line[1]));
      pre.appendChild(li);
    });
    box.appendChild(pre);
    return box;
  }

  function endOutput(panel) {
    for (var s = 0; s < SEATS; s++) {
      var o = OUT[s];
      if (!o || !sees(s) || !o.end.length) continue;
      panel.appendChild(outputBox(seatName(s) + ' after its last move', o.end));
    }
  }

  function renderOutputPanel() {
    var panel = $('output-panel');
    var box = clear($('output'));
    var any = false;
    var where = {};
    M.hands.forEach(function (H, h) {
      H.moves.forEach(function (m, i) { where[String(m.seq)] = [h, i + 1]; });
    });
    for (var s = 0; s < SEATS; s++) {
      var o = OUT[s];
      if (!o || !sees(s)) continue;
      any = true;
      var details = el('details', 'seat-output');
      details.setAttribute('data-seat', String(s));
      details.appendChild(el('summary', '', seatName(s) + ': ' + o.lines + ' line' + (o.lines === 1 ? '' : 's') +
        ' (' + o.file + ')' + (o.skipped ? ', ' + o.skipped + ' in the middle left out' : '')));
      var list = el('ol', 'output-lines mono');
      Object.keys(o.bySeq).forEach(function (seq) {
        var at = where[seq];
        o.bySeq[seq].forEach(function (line, i) {
          var li = el('li');
          li.appendChild(el('span', 'at', (line[0] / 1000).toFixed(3) + ' s'));
          if (at && i === 0) {
            var go = el('button', 'link', 'hand ' + M.hands[at[0]].deal.hand + ', move ' + at[1]);
            go.addEventListener('click', function () { stop(); goTo(at[0], at[1]); });
            li.appendChild(go);
          }
          li.appendChild(el('span', 'text', line[1]));
          list.appendChild(li);
        });
      });
      o.end.concat(o.untimed.map(function (t) { return [null, t]; })).forEach(function (line) {
        var li = el('li');
        li.appendChild(el('span', 'at', line[0] === null ? 'time unknown' : (line[0] / 1000).toFixed(3) + ' s'));
        li.appendChild(el('span', 'text', line[1]));
        list.appendChild(li);
      });
      details.appendChild(list);
      box.appendChild(details);
    }
    panel.hidden = !any;
  }

  // Hands visible from the current position: every one in the all-cards view, only the
  // finished ones in a seat's view (what that seat knew).
  function knownHands() {
    if (V.seat === 'all') return M.hands.filter(function (H) { return H.end; });
    var out = [];
    for (var i = 0; i < M.hands.length && i <= V.h; i++) {
      var H = M.hands[i];
      if (!H.end) continue;
      if (i < V.h || V.k === H.moves.length) out.push(H);
    }
    return out;
  }

  function renderHands() {
    var table = clear($('hands'));
    var head = el('tr');
    head.appendChild(el('th', '', 'Hand'));
    head.appendChild(el('th', '', 'Winner'));
    for (var s = 0; s < SEATS; s++) head.appendChild(el('th', '', 'Seat ' + s + ' ' + M.seats[s]));
    var thead = el('thead');
    thead.appendChild(head);
    table.appendChild(thead);
    var body = el('tbody');
    knownHands().forEach(function (H) {
      var row = el('tr');
      if (H.index === V.h) row.className = 'current';
      var cell = el('td');
      var go = el('button', 'link', String(H.deal.hand));
      go.setAttribute('aria-label', 'Go to the end of hand ' + H.deal.hand);
      go.addEventListener('click', function () { stop(); goTo(H.index, H.moves.length); });
      cell.appendChild(go);
      row.appendChild(cell);
      row.appendChild(el('td', '', validSeat(H.end.winner) ? 'seat ' + H.end.winner : '?'));
      for (var s = 0; s < SEATS; s++) {
        var score = H.end.scores[s];
        var td = el('td', 'num');
        td.appendChild(el('span', 'score', (score > 0 ? '+' : '') + score));
        td.appendChild(el('span', 'muted small', ' ' + (H.end.cards[s] || []).length + ' left \u00b7 ' + H.end.totals[s]));
        row.appendChild(td);
      }
      body.appendChild(row);
    });
    table.appendChild(body);
    if (!body.childNodes.length) {
      var empty = el('tr');
      var td = el('td', 'muted', 'No hand has ended yet.');
      td.colSpan = 6;
      empty.appendChild(td);
      body.appendChild(empty);
    }
  }

  function renderChart() {
    var box = clear($('chart'));
    var hands = knownHands();
    if (!hands.length) { box.appendChild(el('p', 'muted', 'No hand has ended yet.')); return; }
    var W = 600, Hh = 230, L = 44, R = 12, T = 12, B = 28;
    var series = [];
    var lo = 0, hi = 0;
    for (var s = 0; s < SEATS; s++) {
      var pts = [[0, 0]];
      hands.forEach(function (H, i) {
        var v = H.end.totals[s];
        pts.push([i + 1, v]);
        lo = Math.min(lo, v); hi = Math.max(hi, v);
      });
      series.push(pts);
    }
    if (hi === lo) hi = lo + 1;
    var n = hands.length;
    function x(i) { return L + (W - L - R) * i / n; }
    function y(v) { return T + (Hh - T - B) * (hi - v) / (hi - lo); }
    var root = svg('svg', { viewBox: '0 0 ' + W + ' ' + Hh, role: 'img', class: 'chart-svg' });
    root.appendChild(svg('title')).textContent = 'Totals after each hand';
    [lo, 0, hi].forEach(function (v, i, all) {
      if (i === 1 && (v === lo || v === hi)) return;
      root.appendChild(svg('line', { x1: L, x2: W - R, y1: y(v), y2: y(v), class: 'grid-line' }));
      var t = svg('text', { x: L - 6, y: y(v) + 4, 'text-anchor': 'end', class: 'axis' });
      t.textContent = String(v);
      root.appendChild(t);
    });
    var step = Math.max(1, Math.ceil(n / 10));
    for (var i = 0; i <= n; i += step) {
      var t = svg('text', { x: x(i), y: Hh - 8, 'text-anchor': 'middle', class: 'axis' });
      t.textContent = String(i);
      root.appendChild(t);
    }
    var current = hands.indexOf(M.hands[V.h]);
    if (current >= 0) {
      root.appendChild(svg('line', { x1: x(current + 1), x2: x(current + 1), y1: T, y2: Hh - B, class: 'marker' }));
    }
    series.forEach(function (pts, s) {
      var d = pts.map(function (p, i) { return (i ? 'L' : 'M') + x(p[0]).toFixed(1) + ' ' + y(p[1]).toFixed(1); }).join(' ');
      root.appendChild(svg('path', { d: d, fill: 'none', stroke: COLORS[s], 'stroke-width': 2.2, 'stroke-dasharray': DASHES[s] }));
      if (n <= 60) pts.forEach(function (p) { root.appendChild(marker(s, x(p[0]), y(p[1]))); });
    });
    box.appendChild(root);
    var legend = el('ul', 'legend');
    for (var s2 = 0; s2 < SEATS; s2++) {
      var li = el('li');
      var key = svg('svg', { viewBox: '0 0 36 12', width: 36, height: 12 });
      key.appendChild(svg('line', { x1: 0, x2: 36, y1: 6, y2: 6, stroke: COLORS[s2], 'stroke-width': 2.2, 'stroke-dasharray': DASHES[s2] }));
      key.appendChild(marker(s2, 18, 6));
      li.appendChild(key);
      li.appendChild(el('span', '', seatName(s2) + ': ' + series[s2][series[s2].length - 1][1]));
      legend.appendChild(li);
    }
    box.appendChild(legend);
  }

  // One shape per seat, so the series differ without colour too.
  function marker(s, cx, cy) {
    var r = 3.6;
    if (s === 0) return svg('circle', { cx: cx, cy: cy, r: r, fill: COLORS[s] });
    if (s === 1) return svg('rect', { x: cx - r, y: cy - r, width: 2 * r, height: 2 * r, fill: COLORS[s] });
    if (s === 2) return svg('path', { d: 'M' + cx + ' ' + (cy - r - 1) + 'L' + (cx + r + 1) + ' ' + (cy + r) + 'L' + (cx - r - 1) + ' ' + (cy + r) + 'Z', fill: COLORS[s] });
    return svg('path', { d: 'M' + cx + ' ' + (cy - r - 1) + 'L' + (cx + r + 1) + ' ' + cy + 'L' + cx + ' ' + (cy + r + 1) + 'L' + (cx - r - 1) + ' ' + cy + 'Z', fill: COLORS[s] });
  }

  function atEnd() {
    return M.hands.length && V.h === M.hands.length - 1 && V.k === M.hands[V.h].moves.length;
  }

  function renderStandings() {
    var box = clear($('standings'));
    if (!M.end) { box.appendChild(el('p', 'muted', data.live ? 'The match is being played.' : 'The log ends before the match ended.')); return; }
    if (V.seat !== 'all' && !atEnd()) { box.appendChild(el('p', 'muted', 'Known at the end of the match.')); return; }
    box.appendChild(el('p', '', (M.end.status === 'finished' ? 'Finished' : 'Ended: ' + M.end.status) + (M.end.reason ? ': ' + M.end.reason : '')));
    var table = el('table', 'grid');
    var head = el('tr');
    ['Place', 'Seat', 'Total', 'Hands won'].forEach(function (h) { head.appendChild(el('th', '', h)); });
    table.appendChild(head);
    (M.end.standings || []).forEach(function (st) {
      var row = el('tr');
      row.appendChild(el('td', 'num', String(st.place)));
      row.appendChild(el('td', '', (st.seats || []).map(seatName).join(' + ')));
      row.appendChild(el('td', 'num', String(st.total)));
      row.appendChild(el('td', 'num', String(st.won)));
      table.appendChild(row);
    });
    box.appendChild(table);
    if ((M.end.strikes || []).some(function (x) { return x; })) {
      box.appendChild(el('p', 'muted', 'Strikes: ' + M.end.strikes.join(', ')));
    }
  }

  function fact(list, name, value, cls) {
    list.appendChild(el('dt', '', name));
    var dd = el('dd', cls || '', value);
    list.appendChild(dd);
    return dd;
  }

  function renderProof() {
    var list = clear($('proof'));
    var m = M.match;
    fact(list, 'Seed commitment', m ? m.commitment : '', 'mono');
    if (M.end && (V.seat === 'all' || atEnd())) {
      fact(list, 'Revealed seed', M.end.seed || '(none)', 'mono');
      if (M.end.seed_ok === true) fact(list, 'Seed check', '\u2714 SHA-256 of the seed equals the commitment', 'good');
      else if (M.end.seed_ok === false) fact(list, 'Seed check', '\u2718 SHA-256 of the seed does NOT equal the commitment', 'bad');
    } else {
      fact(list, 'Revealed seed', M.end ? 'known at the end of the match' : 'revealed when the match ends');
    }
    if (M.trailer) {
      fact(list, 'Signature', M.trailer.algorithm + ' by key ' + M.trailer.key + ' over ' + M.trailer.lines +
        ' lines (check it with referee verify --public-key)', 'mono');
    }
    var v = data.verdict;
    if (v) {
      var text = v.ok
        ? '\u2714 accepts this log: ' + v.lines + ' lines, ' + v.hands + ' hands (hash chain, deals against the seed, every verdict, the scores)'
        : '\u2718 rejects this log: ' + (v.line ? 'line ' + v.line + ': ' : '') + v.problem;
      fact(list, 'referee verify', text, v.ok ? 'good' : 'bad');
      fact(list, 'Checked', 'by ' + v.checker + ' when this page was written (' + v.at + ')', 'muted');
    } else if (data.live) {
      fact(list, 'referee verify', 'the full log is checked when the match ends');
    }
  }

  function renderSettings() {
    var list = clear($('settings'));
    var m = M.match;
    if (!m) { fact(list, 'Match', 'the log has no match_created event'); return; }
    fact(list, 'Match', m.id, 'mono');
    fact(list, 'Referee', 'version ' + m.software + ', protocol ' + m.protocol);
    function table(name, obj) {
      var keys = Object.keys(obj || {});
      if (!keys.length) return;
      list.appendChild(el('dt', 'section', name));
      list.appendChild(el('dd', 'section'));
      keys.forEach(function (k) { fact(list, k.replace(/_/g, ' '), String(obj[k])); });
    }
    table('Rules', m.rules);
    table('Clocks (ms)', m.time);
    table('Fault policy', m.faults);
    table('Drills', m.drills);
  }

  function renderHeader() {
    var m = M.match;
    var id = m ? m.id : '';
    document.title = clean('Match ' + id + (m ? ' (' + m.profile + ')' : ''));
    $('title').textContent = clean(m ? 'Match ' + id : 'Match');
    var sub = m ? [m.profile, M.seats.join(' \u00b7 ')].join(' \u2014 ') : '';
    $('subtitle').textContent = clean(sub);
    var select = $('perspective');
    while (select.options.length > 1) select.remove(1);
    for (var s = 0; s < SEATS; s++) {
      var opt = el('option', '', 'Seat ' + s + ': ' + M.seats[s]);
      opt.value = String(s);
      select.appendChild(opt);
    }
    select.value = String(V.seat);
    // A live match shows public information only: every hand face down, no choice to make.
    $('perspective-label').hidden = !!data.live;
    var v = data.verdict;
    var banner = $('banner');
    if (v && !v.ok) {
      banner.hidden = false;
      banner.className = 'banner bad';
      clear(banner);
      banner.appendChild(el('strong', '', 'This log does not verify. '));
      banner.appendChild(el('span', '', (v.line ? 'First bad line: ' + v.line + '. ' : '') + v.problem + '. '));
      banner.appendChild(el('span', '', 'The page shows what the log says, which is not proof of what the referee decided.'));
      if (v.line) {
        var go = el('button', 'link', 'Go to line ' + v.line);
        go.addEventListener('click', function () { stop(); goToLine(v.line); });
        banner.appendChild(go);
      }
    }
  }

  // -- navigation -----------------------------------------------------------------------

  function goTo(h, k) {
    if (!M.hands.length) { V.h = -1; V.k = 0; render(); return; }
    h = Math.max(0, Math.min(h, M.hands.length - 1));
    k = Math.max(0, Math.min(k, M.hands[h].moves.length));
    V.h = h; V.k = k;
    var atLast = toPos(h, k) === positionCount() - 1;
    if (data.live) {
      V.follow = atLast;
      $('follow').hidden = atLast;
    }
    render();
  }

  function goPos(p) {
    var hk = fromPos(Math.max(0, Math.min(p, positionCount() - 1)));
    goTo(hk[0], hk[1]);
  }

  function pos() { return M.hands.length ? toPos(V.h, V.k) : 0; }

  function trickStart(h, k) {
    var H = M.hands[h];
    return k === 0 || k === H.moves.length || !!H.moves[k - 1].cleared;
  }

  function nextTrick() {
    var last = positionCount() - 1;
    for (var p = pos() + 1; p <= last; p++) {
      var hk = fromPos(p);
      if (trickStart(hk[0], hk[1])) return goPos(p);
    }
    goPos(last);
  }

  function prevTrick() {
    for (var p = pos() - 1; p >= 0; p--) {
      var hk = fromPos(p);
      if (trickStart(hk[0], hk[1])) return goPos(p);
    }
    goPos(0);
  }

  function nextHand() {
    if (V.h < M.hands.length - 1) goTo(V.h + 1, 0); else goTo(V.h, Infinity);
  }

  function prevHand() {
    if (V.k > 0) goTo(V.h, 0); else goTo(V.h - 1, 0);
  }

  // The first moment that shows log line ``line``: a move's line is shown after it.
  function goToLine(line) {
    for (var i = 0; i < M.hands.length; i++) {
      var H = M.hands[i];
      if (H.deal.seq >= line) return goTo(i, 0);
      for (var k = 0; k <= H.moves.length; k++) {
        var notes = H.notes[k] || [];
        if (notes.some(function (o) { return o.seq >= line; })) return goTo(i, k);
        if (k < H.moves.length && H.moves[k].seq >= line) return goTo(i, k + 1);
      }
      if (H.end && H.end.seq >= line) return goTo(i, H.moves.length);
    }
    goPos(positionCount() - 1);
  }

  function play() {
    if (V.timer) { stop(); return; }
    if (pos() >= positionCount() - 1 && !data.live) goPos(0);
    $('play').textContent = '\u275a\u275a';
    $('play').setAttribute('aria-label', 'Pause');
    V.timer = setInterval(function () {
      if (pos() >= positionCount() - 1) { if (!data.live) stop(); return; }
      goPos(pos() + 1);
    }, Number($('speed').value) || 800);
  }

  function stop() {
    if (V.timer) clearInterval(V.timer);
    V.timer = null;
    $('play').textContent = '\u25b6';
    $('play').setAttribute('aria-label', 'Play');
  }

  // The address follows the position, written at most every 200 ms: browsers throttle a
  // page that rewrites its history faster (as holding an arrow key does).
  // An address typed or followed since the last write wins over a pending write.
  var hashTimer = null;
  var written = location.hash;
  function writeHash() {
    var hash = '#hand=' + (V.h >= 0 ? M.hands[V.h].deal.hand : 0) + '&move=' + V.k;
    if (V.seat !== 'all') hash += '&seat=' + V.seat;
    $('table').setAttribute('data-pos', hash);
    if (hashTimer) return;
    hashTimer = setTimeout(function () {
      hashTimer = null;
      if (location.hash !== written) return;
      var now = $('table').getAttribute('data-pos');
      if (now === written) return;
      try { history.replaceState(null, '', now); written = now; } catch (e) { /* a sandboxed frame */ }
    }, 200);
  }

  function readHash() {
    var out = {};
    location.hash.replace(/^#/, '').split('&').forEach(function (part) {
      var kv = part.split('=');
      if (kv.length === 2) out[kv[0]] = decodeURIComponent(kv[1]);
    });
    return out;
  }

  function applyHash() {
    written = location.hash;
    var q = readHash();
    if (q.seat !== undefined && !data.live) {
      var s = parseInt(q.seat, 10);
      V.seat = validSeat(s) ? s : 'all';
      $('perspective').value = String(V.seat);
    }
    if (q.hand === undefined) return false;
    var n = parseInt(q.hand, 10);
    var h = -1;
    M.hands.forEach(function (H, i) { if (H.deal.hand === n) h = i; });
    if (h < 0) return false;
    goTo(h, parseInt(q.move, 10) || 0);
    return true;
  }

  function bind() {
    $('first').addEventListener('click', function () { stop(); goPos(0); });
    $('last').addEventListener('click', function () { stop(); goPos(positionCount() - 1); });
    $('prev').addEventListener('click', function () { stop(); goPos(pos() - 1); });
    $('next').addEventListener('click', function () { stop(); goPos(pos() + 1); });
    $('prev-trick').addEventListener('click', function () { stop(); prevTrick(); });
    $('next-trick').addEventListener('click', function () { stop(); nextTrick(); });
    $('prev-hand').addEventListener('click', function () { stop(); prevHand(); });
    $('next-hand').addEventListener('click', function () { stop(); nextHand(); });
    $('play').addEventListener('click', play);
    $('speed').addEventListener('change', function () { if (V.timer) { stop(); play(); } });
    $('scrubber').addEventListener('input', function () { stop(); goPos(Number($('scrubber').value)); });
    $('follow').addEventListener('click', function () { goPos(positionCount() - 1); });
    $('perspective').addEventListener('change', function () {
      var v = $('perspective').value;
      V.seat = v === 'all' ? 'all' : Number(v);
      V.drawnPanels = '';
      V.drawnTimeline = '';
      render();
    });
    window.addEventListener('hashchange', function () { applyHash(); });
    document.addEventListener('keydown', function (e) {
      var tag = e.target && e.target.tagName;
      if (tag === 'INPUT' || tag === 'SELECT' || tag === 'TEXTAREA' || e.altKey || e.ctrlKey || e.metaKey) return;
      var handled = true;
      switch (e.key) {
        case 'ArrowRight': stop(); if (e.shiftKey) nextTrick(); else goPos(pos() + 1); break;
        case 'ArrowLeft': stop(); if (e.shiftKey) prevTrick(); else goPos(pos() - 1); break;
        case 'ArrowDown': stop(); nextTrick(); break;
        case 'ArrowUp': stop(); prevTrick(); break;
        case 'PageDown': stop(); nextHand(); break;
        case 'PageUp': stop(); prevHand(); break;
        case 'Home': stop(); goPos(0); break;
        case 'End': stop(); goPos(positionCount() - 1); break;
        case ' ': if (tag === 'BUTTON') { handled = false; break; } play(); break;
        default: handled = false;
      }
      if (handled) e.preventDefault();
    });
    var dl = $('download');
    if (data.log_gz) {
      $('download-line').hidden = false;
      dl.addEventListener('click', download);
    }
  }

  // The log travels inside the page (gzip, base64): hand it back as a file, offline.
  function download() {
    var bin = atob(data.log_gz);
    var bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
    new Response(stream).blob().then(function (blob) {
      var a = document.createElement('a');
      a.href = URL.createObjectURL(blob);
      var name = String(M.match ? M.match.id : 'match').replace(/[^A-Za-z0-9._-]/g, '_') || 'match';
      a.download = name + '.jsonl';
      document.body.appendChild(a);
      a.click();
      setTimeout(function () { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
    });
  }

  // -- live: ops arrive over an EventSource ----------------------------------------------

  function startLive() {
    var live = data.live;
    var status = $('live');
    status.hidden = false;
    status.textContent = 'Live: connecting\u2026';
    var pending = false;
    var source = new EventSource(live.events);
    function draw() {
      pending = false;
      if (!M.drawnHeader) { renderHeader(); renderSettings(); }
      M.drawnHeader = !!M.match;
      if (V.follow || V.h < 0) goPos(positionCount() - 1); else render();
    }
    source.onopen = function () { status.textContent = 'Live: following the match as it is played'; };
    source.addEventListener('clock', function (e) {
      var server = Number(e.data);
      if (server > 0) V.clockOffset = server - Date.now();
      tickClock();
    });
    setInterval(tickClock, 200);
    source.onerror = function () { status.textContent = 'Live: connection lost, retrying\u2026'; };
    source.onmessage = function (e) {
      var op;
      try { op = JSON.parse(e.data); } catch (err) { return; }
      ingest(op);
      if (op.t === 'end') {
        source.close();
        status.textContent = 'The match is over: opening the full replay\u2026';
        draw();
        setTimeout(function () { location.replace(live.replay + location.hash); }, 1500);
        return;
      }
      if (!pending) { pending = true; requestAnimationFrame(draw); }
    };
    source.addEventListener('over', function () {
      source.close();
      location.replace(live.replay + location.hash);
    });
    source.addEventListener('refused', function (e) {
      source.close();
      status.textContent = clean('Live: ' + e.data);
    });
  }

  // -- start ----------------------------------------------------------------------------

  (data.ops || []).forEach(ingest);
  bind();
  renderHeader();
  renderSettings();
  if (!applyHash()) goTo(0, 0);
  if (data.live) startLive();
  document.documentElement.setAttribute('data-ready', '1');
  window.viewerReadyAt = performance.now();
})();
