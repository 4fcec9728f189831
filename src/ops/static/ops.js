// The console's only script: local times, and live refresh of pages with moving numbers.
(function () {
  'use strict';
  function localTimes(root) {
    root.querySelectorAll('time[datetime]').forEach(function (t) {
      var d = new Date(t.getAttribute('datetime'));
      if (!isNaN(d)) t.textContent = d.toLocaleString();
    });
  }
  localTimes(document);
  var main = document.querySelector('main[data-live]');
  if (!main) return;
  var every = Number(main.getAttribute('data-live')) || 5000;
  var timer = null;
  // The link or button the keyboard is on, by what it does (not by the element, which the refresh
  // replaces): found again afterwards so the focus stays there instead of falling to the page's top.
  function keyOf(el) {
    if (!el || el === main || !main.contains(el)) return null;
    var fields = el.form
      ? Array.prototype.map.call(el.form.querySelectorAll('input[type=hidden]'), function (i) {
          return i.name + '=' + i.value;
        })
      : [];
    return [el.tagName, el.getAttribute('href') || '', el.form ? el.form.getAttribute('action') : '', el.textContent.trim(), fields.join('&')].join('|');
  }
  function refocus(key) {
    if (!key) return;
    var all = main.querySelectorAll('a[href], button');
    for (var i = 0; i < all.length; i++) {
      if (keyOf(all[i]) === key) return all[i].focus({ preventScroll: true });
    }
  }
  // The operator is in a field, or changed one and has not sent it yet: a refresh would put the
  // page's own values back (checked again when the answer arrives, which may be seconds later).
  function editing() {
    var active = document.activeElement;
    if (active && main.contains(active) && active.matches('input, select, textarea')) return true;
    var fields = main.querySelectorAll('input, select, textarea');
    for (var i = 0; i < fields.length; i++) {
      var f = fields[i];
      if (f.type === 'checkbox' || f.type === 'radio') {
        if (f.checked !== f.defaultChecked) return true;
      } else if (f.tagName === 'SELECT') {
        for (var o = 0; o < f.options.length; o++) if (f.options[o].selected !== f.options[o].defaultSelected) return true;
      } else if (f.type !== 'hidden' && f.value !== f.defaultValue) return true;
    }
    return false;
  }
  function refresh() {
    // never replace a form the operator is typing in
    if (document.hidden || editing()) return;
    fetch(location.href, { headers: { 'X-Ops-Refresh': '1' }, credentials: 'same-origin' })
      .then(function (r) {
        return r.ok ? r.text() : null;
      })
      .then(function (text) {
        if (!text) return;
        var next = new DOMParser().parseFromString(text, 'text/html').querySelector('main');
        if (!next || editing()) return;
        var focused = keyOf(document.activeElement);
        main.innerHTML = next.innerHTML;
        localTimes(main);
        refocus(focused);
        main.setAttribute('data-refreshed', new Date().toISOString());
      })
      .catch(function () {});
  }
  function start() {
    if (!timer) timer = setInterval(refresh, every);
  }
  function stop() {
    clearInterval(timer);
    timer = null;
  }
  document.addEventListener('visibilitychange', function () {
    if (document.hidden) stop();
    else {
      refresh();
      start();
    }
  });
  if (!document.hidden) start();
})();
