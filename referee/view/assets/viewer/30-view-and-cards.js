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

