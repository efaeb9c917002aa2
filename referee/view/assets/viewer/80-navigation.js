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

