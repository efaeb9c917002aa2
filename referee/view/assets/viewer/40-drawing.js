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

