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
