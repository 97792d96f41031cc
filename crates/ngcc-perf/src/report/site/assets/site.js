// ngcc-perf site: sortable and filterable tables. Records what happened on <html> so a
// headless browser can check the page: data-rendered="ok", data-errors="" (else messages).
(function () {
  'use strict';
  var root = document.documentElement;
  var errors = [];
  root.dataset.errors = '';
  function note(msg) {
    errors.push(String(msg));
    root.dataset.errors = errors.join(' | ');
  }
  // Capture phase also sees failed loads of images, scripts and stylesheets.
  window.addEventListener('error', function (e) {
    var t = e.target;
    note(e.message || ('failed to load ' + ((t && (t.src || t.href)) || 'a resource')));
  }, true);
  window.addEventListener('unhandledrejection', function (e) { note('unhandled rejection: ' + e.reason); });

  function cellText(row, col) {
    var c = row.cells[col];
    return c ? c.textContent.trim() : '';
  }
  function isBlank(text) { return text === '' || text === '\u2013' || text === 'failed'; }

  function sortBy(table, col, numeric, dir) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var ta = cellText(a, col), tb = cellText(b, col);
      var ka = numeric ? a.cells[col] && a.cells[col].getAttribute('data-v') : ta;
      var kb = numeric ? b.cells[col] && b.cells[col].getAttribute('data-v') : tb;
      var ea = ka === null || ka === undefined || isBlank(ta);
      var eb = kb === null || kb === undefined || isBlank(tb);
      if (ea || eb) { return ea === eb ? 0 : (ea ? 1 : -1); } // no value: always last
      var r = numeric ? parseFloat(ka) - parseFloat(kb)
        : ka.localeCompare(kb, undefined, { numeric: true, sensitivity: 'base' });
      return dir * r;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }

  function initSort(table) {
    if (!table.tHead || !table.tBodies.length) { return; }
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, col) {
      th.classList.add('sortable');
      th.tabIndex = 0;
      th.title = 'Sort by this column';
      function go() {
        var dir = th.getAttribute('aria-sort') === 'ascending' ? -1 : 1;
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute('aria-sort'); });
        th.setAttribute('aria-sort', dir === 1 ? 'ascending' : 'descending');
        sortBy(table, col, th.getAttribute('data-type') === 'num', dir);
      }
      th.addEventListener('click', go);
      th.addEventListener('keydown', function (e) {
        if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); go(); }
      });
    });
  }

  function initFilter(table) {
    var rows = table.tBodies[0].rows;
    var box = document.createElement('div');
    box.className = 'filter';
    var input = document.createElement('input');
    input.type = 'search';
    input.placeholder = 'Filter rows (all words must match)';
    input.setAttribute('aria-label', 'Filter table rows');
    var count = document.createElement('span');
    function apply() {
      var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      var shown = 0;
      Array.prototype.forEach.call(rows, function (r) {
        var text = r.textContent.toLowerCase();
        var ok = words.every(function (w) { return text.indexOf(w) >= 0; });
        r.hidden = !ok;
        if (ok) { shown += 1; }
      });
      count.textContent = ' ' + shown + ' of ' + rows.length + ' rows';
    }
    input.addEventListener('input', apply);
    box.appendChild(input);
    box.appendChild(count);
    var wrap = table.parentNode;
    wrap.parentNode.insertBefore(box, wrap);
    apply();
  }

  function init() {
    var css = getComputedStyle(root).getPropertyValue('--site-css').trim();
    if (css !== 'ok') { note('stylesheet not loaded'); }
    var tables = document.querySelectorAll('table.data');
    var rows = 0;
    Array.prototype.forEach.call(tables, function (t) {
      initSort(t);
      if (t.classList.contains('filterable')) { initFilter(t); }
      rows += t.tBodies.length ? t.tBodies[0].rows.length : 0;
    });
    var charts = document.querySelectorAll('svg.chart');
    Array.prototype.forEach.call(charts, function (svg) {
      if (!svg.querySelector('rect, circle')) { note('empty chart: ' + svg.getAttribute('aria-label')); }
    });
    root.dataset.tables = String(tables.length);
    root.dataset.rows = String(rows);
    root.dataset.charts = String(charts.length);
    root.dataset.rendered = errors.length ? 'errors' : 'ok';
  }

  // Opened with `?selfcheck` (by the headless-browser test): sort and filter the way a
  // reader would and record the outcome in data-selfcheck.
  function selfCheck() {
    var problems = [];
    function keys(table, col, numeric) {
      return Array.prototype.map.call(table.tBodies[0].rows, function (r) {
        var text = cellText(r, col);
        return numeric ? parseFloat(r.cells[col].getAttribute('data-v')) : text;
      });
    }
    function ordered(list, numeric, dir) {
      for (var i = 1; i < list.length; i++) {
        var d = numeric ? list[i] - list[i - 1]
          : list[i].localeCompare(list[i - 1], undefined, { numeric: true, sensitivity: 'base' });
        if (dir * d < 0) { return false; }
      }
      return true;
    }
    var sorted = false;
    Array.prototype.forEach.call(document.querySelectorAll('table.data'), function (t) {
      if (sorted || !t.tHead || t.tBodies[0].rows.length < 2) { return; }
      Array.prototype.forEach.call(t.tHead.rows[0].cells, function (th, col) {
        if (sorted) { return; }
        var numeric = th.getAttribute('data-type') === 'num';
        var all = Array.prototype.every.call(t.tBodies[0].rows, function (r) {
          return numeric ? r.cells[col] && r.cells[col].hasAttribute('data-v') : !isBlank(cellText(r, col));
        });
        if (!all) { return; }
        th.click();
        if (!ordered(keys(t, col, numeric), numeric, 1)) { problems.push('ascending sort failed: ' + th.textContent); }
        th.click();
        if (!ordered(keys(t, col, numeric), numeric, -1)) { problems.push('descending sort failed: ' + th.textContent); }
        sorted = true;
      });
    });
    if (!sorted) { problems.push('no sortable column found'); }
    var table = document.querySelector('table.filterable');
    if (table) {
      var input = table.parentNode.previousElementSibling.querySelector('input');
      var rows = table.tBodies[0].rows;
      function visible() {
        return Array.prototype.filter.call(rows, function (r) { return !r.hidden; }).length;
      }
      input.value = 'no-such-row-anywhere';
      input.dispatchEvent(new Event('input'));
      if (visible() !== 0) { problems.push('filter kept non-matching rows'); }
      input.value = cellText(rows[0], 0);
      input.dispatchEvent(new Event('input'));
      if (visible() < 1) { problems.push('filter hid a matching row'); }
      input.value = '';
      input.dispatchEvent(new Event('input'));
      if (visible() !== rows.length) { problems.push('clearing the filter did not show every row'); }
    }
    root.dataset.selfcheck = problems.length ? problems.join(' | ') : 'ok';
  }

  try {
    init();
    if (/[?&]selfcheck\b/.test(location.search)) { selfCheck(); }
  } catch (e) {
    note(e && e.message ? e.message : e);
    root.dataset.rendered = 'failed';
  }
})();
