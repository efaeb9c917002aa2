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

