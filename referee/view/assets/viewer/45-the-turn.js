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

