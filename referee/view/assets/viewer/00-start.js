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

