/* SPDX-License-Identifier: Apache-2.0 */
// fakegpu-trace dashboard: /api/v1/history (what the server kept from before the page was
// opened), /api/v1/summary once, then one /api/v1/stream event per collector refresh
// (Server-Sent Events). Schema: userspace/server/API.md.
//
// Bounded work whatever the load: history covers at most an hour and at most MAX_POINTS
// samples (older ones are thinned), each device chart has at most TOP_PER_DEVICE process
// areas plus "other", table rows are reused and only changed cells are written, charts update
// with animation off, and rendering happens at most once per animation frame.
//
// For tests: window.fakegpuState holds the latest snapshot, the history and the chart series;
// the table is <table id="processes"> with one <tr data-pid="…"> per process; each chart's
// canvas carries data-series (what it shows now) and data-first-series (its first drawing);
// the drill-down's calls by library are <tr data-caller="OBJECT"> in <table id="detail-callers">.
//
// Transport: the event stream, or polling /api/v1/summary once per refresh interval. Headless
// Chrome polls by default: snapshot tools (--dump-dom --virtual-time-budget) wait for every
// request to finish, and an event stream never does. ?transport=poll|stream overrides.
'use strict';

(function () {
  const HISTORY_MS = 60 * 60 * 1000;  // keep one hour
  const MAX_POINTS = 360;             // samples kept (older half thinned when exceeded)
  const TOP_PER_DEVICE = 8;           // processes with their own area on a device chart
  const RECONNECT_MS = 3000;
  const DETAIL_REFRESH_MS = 2000;     // the drill-down re-fetches its process at most this often

  const state = {
    snapshot: null,       // the latest /api/v1/summary document
    history: [],          // [{t, devices: {device: {key: bytes}}, totals, frag: {device: ratio}, names}]
    series: {},           // device -> [{label, key, data: [{x, y}]}] as last drawn
    charts: {},           // device -> Chart
    detail: null,         // the last /api/v1/processes/{pid} document shown
    selectedPid: null,
    sort: { key: 'live_bytes', dir: -1 },
    filter: '',
    frames: 0,            // documents received (stream events or polls)
    connection: 'connecting',
    transport: chooseTransport(),
    token: sessionStorage.getItem('fakegpu-token') || '',
  };
  window.fakegpuState = state;

  function chooseTransport() {
    const asked = new URLSearchParams(location.search).get('transport');
    if (asked === 'poll' || asked === 'stream') return asked;
    return /HeadlessChrome/.test(navigator.userAgent) ? 'poll' : 'stream';
  }

  const $ = (id) => document.getElementById(id);
  const hasCharts = () => typeof window.Chart === 'function';

  // ---- formatting ---------------------------------------------------------------------------

  function bytes(n) {
    if (n === null || n === undefined) return '–';
    if (n < 1024) return n + ' B';
    const units = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];
    let v = n / 1024, u = 0;
    while (v >= 1023.95 && u + 1 < units.length) { v /= 1024; ++u; }
    return v.toFixed(1) + ' ' + units[u];
  }
  function duration(ns) {
    if (ns < 1e3) return ns.toFixed(0) + ' ns';
    if (ns < 1e6) return (ns / 1e3).toFixed(1) + ' µs';
    if (ns < 1e9) return (ns / 1e6).toFixed(1) + ' ms';
    return (ns / 1e9).toFixed(2) + ' s';
  }
  function clock(ms) { return new Date(ms).toLocaleTimeString([], { hour12: false }); }
  function deviceLabel(d) { return d < 0 ? 'host' : String(d); }
  function procKey(p) { return p.pid + ':' + p.start_ns; }
  function color(key, alpha) {
    let h = 0;
    for (const c of String(key)) h = (h * 31 + c.charCodeAt(0)) >>> 0;
    return 'hsla(' + (h % 360) + ', 65%, 50%, ' + alpha + ')';
  }
  function cell(tr, col, text, title) {
    let td = tr.querySelector('td[data-col="' + col + '"]');
    if (td.textContent !== text) td.textContent = text;
    if (title !== undefined && td.title !== title) td.title = title;
  }
  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // ---- connection ---------------------------------------------------------------------------

  class Unauthorized extends Error {}

  function authHeaders() { return state.token ? { Authorization: 'Bearer ' + state.token } : {}; }

  function setStatus(s, text) {
    state.connection = s;
    const e = $('status');
    e.dataset.state = s;
    e.textContent = text || s;
  }

  async function getJson(path) {
    const r = await fetch(path, { headers: authHeaders(), cache: 'no-store' });
    if (r.status === 401) throw new Unauthorized();
    if (!r.ok) throw new Error(path + ': HTTP ' + r.status);
    return r.json();
  }

  function askToken(message) {
    setStatus('unauthorized', 'token needed');
    $('auth').hidden = false;
    $('auth-error').textContent = message || '';
    $('auth-token').focus();
  }

  let stream = null;      // EventSource or AbortController
  let pollTimer = null;
  let reconnectTimer = null;

  function closeStream() {
    if (stream instanceof EventSource) stream.close();
    else if (stream) stream.abort();
    stream = null;
    if (pollTimer) clearTimeout(pollTimer);
    pollTimer = null;
  }

  function scheduleReconnect() {
    closeStream();
    if (reconnectTimer) return;
    setStatus('reconnecting', 'reconnecting…');
    reconnectTimer = setTimeout(() => { reconnectTimer = null; connect(); }, RECONNECT_MS);
  }

  async function connect() {
    try {
      await loadHistory();
      ingest(await getJson('/api/v1/summary'));
    } catch (e) {
      if (e instanceof Unauthorized) {
        askToken(state.token ? 'the token was refused' : '');
        return;
      }
      setStatus('error', 'server unreachable');
      scheduleReconnect();
      return;
    }
    $('auth').hidden = true;
    if (state.transport === 'poll') startPolling();
    // EventSource cannot send an Authorization header: with a token, read the stream with fetch.
    else if (!state.token && typeof EventSource === 'function') connectEventSource();
    else connectFetchStream();
  }

  // The server's history (monitor/attach --listen keep --history seconds of refreshes): the
  // samples this page has not recorded itself, so a page opened late draws the past. A server
  // without it (404) or an error leaves the history as it is.
  async function loadHistory() {
    const last = state.history.length ? state.history[state.history.length - 1].t : 0;
    let doc;
    try {
      doc = await getJson('/api/v1/history?points=' + MAX_POINTS + (last ? '&since=' + last : ''));
    } catch (e) {
      if (e instanceof Unauthorized) throw e;
      return;
    }
    for (const h of doc.samples || []) {
      const sample = { t: h.time_unix_ms, devices: {}, totals: {}, frag: {}, names: {} };
      for (const d of h.devices) {
        sample.devices[d.device] = {};
        sample.totals[d.device] = d.traced_live_bytes;
        sample.frag[d.device] = d.fragmentation ? d.fragmentation.ratio : null;
      }
      for (const p of h.processes) {
        const k = procKey(p);
        (sample.devices[p.device] || (sample.devices[p.device] = {}))[k] = p.live_bytes;
        sample.names[k] = p.pid + ' ' + p.comm;
      }
      pushSample(sample);
    }
  }

  // One /api/v1/summary per refresh interval; the next request only once this one answered.
  function startPolling() {
    setStatus('live', 'live (polling)');
    const delay = () => Math.min(5000, Math.max(200, ((state.snapshot && state.snapshot.interval_s) || 1) * 1000));
    const tick = async () => {
      pollTimer = null;
      try {
        const doc = await getJson('/api/v1/summary');
        state.frames += 1;
        ingest(doc);
        setStatus('live', 'live (polling)');
      } catch (e) {
        if (e instanceof Unauthorized) { askToken('the token was refused'); return; }
        setStatus('reconnecting', 'reconnecting…');
      }
      pollTimer = setTimeout(tick, delay());
    };
    pollTimer = setTimeout(tick, delay());
  }

  function connectEventSource() {
    const es = new EventSource('/api/v1/stream');
    stream = es;
    es.onopen = () => setStatus('live');
    es.onmessage = (ev) => onEventData(ev.data);
    es.onerror = () => {
      // EventSource retries by itself (the server's retry: field); once CLOSED it has given up.
      if (es.readyState === EventSource.CLOSED) scheduleReconnect();
      else setStatus('reconnecting', 'reconnecting…');
    };
  }

  async function connectFetchStream() {
    const ctrl = new AbortController();
    stream = ctrl;
    try {
      const r = await fetch('/api/v1/stream', { headers: authHeaders(), cache: 'no-store', signal: ctrl.signal });
      if (r.status === 401) { askToken('the token was refused'); return; }
      if (!r.ok || !r.body) throw new Error('HTTP ' + r.status);
      setStatus('live');
      const reader = r.body.getReader();
      const decoder = new TextDecoder();
      let buf = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
        let end;
        while ((end = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, end);
          buf = buf.slice(end + 2);
          const data = block.split('\n').filter((l) => l.startsWith('data:'))
            .map((l) => l.slice(5).replace(/^ /, '')).join('\n');
          if (data) onEventData(data);
        }
      }
    } catch (e) {
      if (ctrl.signal.aborted) return;
    }
    if (stream === ctrl) scheduleReconnect();
  }

  function onEventData(data) {
    let doc;
    try { doc = JSON.parse(data); } catch (e) { return; }
    state.frames += 1;
    ingest(doc);
  }

  // ---- data ---------------------------------------------------------------------------------

  function ingest(doc) {
    const prev = state.snapshot;
    // A restarted collector counts from 1 again: its history is another story.
    if (prev && doc.sequence < prev.sequence) state.history = [];
    if (!prev || doc.sequence !== prev.sequence || state.history.length === 0) record(doc);
    state.snapshot = doc;
    scheduleRender();
  }

  // ?bench=N (scripts/bench.sh): N refreshes of the first document recorded as history, one
  // interval apart, then a full render and one more refresh, timed; the result goes into
  // <pre id="bench-result"> as JSON (headless Chromium's --dump-dom reads it).
  function benchPage(doc, samples) {
    state.snapshot = doc;
    const step = (doc.interval_s || 1) * 1000;
    const base = doc.time_unix_ms || Date.now();
    const t0 = performance.now();
    for (let i = samples; i > 0; --i) record(Object.assign({}, doc, { time_unix_ms: base - i * step }));
    const t1 = performance.now();
    render();
    const t2 = performance.now();
    record(Object.assign({}, doc, { time_unix_ms: base }));
    const parts = {};
    for (const [name, fn] of [['alerts', renderAlerts], ['devices', renderDevices], ['table', renderTable],
                              ['health', renderHealth]]) {
      const a = performance.now();
      fn(doc);
      parts[name + '_ms'] = performance.now() - a;
    }
    const t3 = performance.now();
    const pre = document.createElement('pre');
    pre.id = 'bench-result';
    pre.textContent = JSON.stringify({
      processes: doc.processes.length, samples, history_kept: state.history.length,
      record_ms_per_sample: (t1 - t0) / samples, first_render_ms: t2 - t1, refresh_ms: t3 - t2, ...parts });
    document.body.appendChild(pre);
  }

  function record(doc) {
    // totals: each device's sum, so a chart's "other" is the total less its top processes
    // (a subtraction per sample, not a pass over every process of every sample).
    const sample = { t: doc.time_unix_ms || Date.now(), devices: {}, totals: {}, frag: {}, names: {} };
    const h0 = state.history;
    if (h0.length && h0[h0.length - 1].t >= sample.t) return;  // the server's history has it already
    for (const d of doc.devices) {
      sample.devices[d.device] = {};
      sample.frag[d.device] = d.fragmentation ? d.fragmentation.ratio : null;
    }
    for (const p of doc.processes) {
      for (const d of p.devices) {
        if (!d.live_bytes) continue;
        (sample.devices[d.device] || (sample.devices[d.device] = {}))[procKey(p)] = d.live_bytes;
        sample.totals[d.device] = (sample.totals[d.device] || 0) + d.live_bytes;
      }
    }
    pushSample(sample);
  }

  function pushSample(sample) {
    const h = state.history;
    h.push(sample);
    while (h.length && h[0].t < sample.t - HISTORY_MS) h.shift();
    if (h.length > MAX_POINTS) {
      // Thin the older half to every other sample: recent detail stays, the hour still fits.
      const half = Math.floor(h.length / 2);
      state.history = h.slice(0, half).filter((_, i) => i % 2 === 0).concat(h.slice(half));
    }
  }

  // ---- rendering ----------------------------------------------------------------------------

  let renderPending = false;
  function scheduleRender() {
    if (renderPending) return;
    renderPending = true;
    const run = () => { renderPending = false; render(); };
    // Background tabs get no animation frames: the history is still recorded in ingest().
    if (document.hidden) setTimeout(run, 1000); else requestAnimationFrame(run);
  }

  function render() {
    const s = state.snapshot;
    if (!s) return;
    $('updated').textContent = 'updated ' + clock(s.time_unix_ms) + ' · refresh every ' + s.interval_s + ' s';
    $('version').textContent = 'v' + s.version;
    renderAlerts(s);
    renderDevices(s);
    renderTable(s);
    renderHealth(s);
    if (state.selectedPid !== null) refreshDetail(false);
  }

  function renderAlerts(s) {
    const ul = $('alerts');
    ul.replaceChildren();
    for (const a of s.alerts) {
      const li = el('li', { 'data-alert': a.type, class: 'sev-' + a.severity }, a.message);
      if (a.pid !== undefined) li.dataset.pid = a.pid;
      if (a.device !== undefined) li.dataset.device = a.device;
      ul.appendChild(li);
    }
    if (!s.alerts.length) ul.appendChild(el('li', { class: 'none' }, 'none'));
    $('alert-count').textContent = s.alerts.length ? '(' + s.alerts.length + ')' : '';
  }

  function deviceCard(d) {
    let card = document.querySelector('#devices .device[data-device="' + d.device + '"]');
    if (card) return card;
    card = el('div', { class: 'device', 'data-device': d.device });
    card.append(el('h3'), el('div', { class: 'usage' }), el('div', { class: 'forecast' }));
    const meter = el('div', { class: 'meter' });
    meter.appendChild(el('div', { class: 'fill' }));
    card.appendChild(meter);
    const box = el('div', { class: 'chart-box' });
    box.appendChild(el('canvas', { id: 'device-chart-' + deviceLabel(d.device) }));
    card.appendChild(box);
    if (d.device >= 0) {
      // Fragmentation over time: 1 - largest free extent / free bytes (API.md).
      const fbox = el('div', { class: 'chart-box small frag' });
      fbox.appendChild(el('canvas', { id: 'frag-chart-' + deviceLabel(d.device) }));
      card.appendChild(fbox);
    }
    // GPUs in order, host memory last.
    const cards = [...document.querySelectorAll('#devices .device')];
    const after = cards.find((c) => {
      const o = Number(c.dataset.device);
      return d.device < 0 ? false : (o < 0 || o > d.device);
    });
    $('devices').insertBefore(card, after || null);
    return card;
  }

  function renderDevices(s) {
    $('charts-unavailable').hidden = hasCharts();
    const seen = new Set();
    for (const d of s.devices) {
      seen.add(String(d.device));
      const card = deviceCard(d);
      const title = d.device < 0 ? 'Host (pinned memory)' : 'GPU ' + d.device + (d.name ? ' · ' + d.name : '');
      card.querySelector('h3').textContent = title;
      const full = d.used_ratio !== null && d.used_ratio >= 0.9;
      card.classList.toggle('full', full);
      let usage = 'traced ' + bytes(d.traced.live_bytes) + ' (peak ' + bytes(d.traced.peak_bytes) + ') by ' +
        d.traced.processes + (d.traced.processes === 1 ? ' process' : ' processes');
      if (d.total_bytes) usage = bytes(d.used_bytes) + ' of ' + bytes(d.total_bytes) + ' in use (' +
        (d.used_ratio * 100).toFixed(1) + '%) · ' + usage;
      card.querySelector('.usage').textContent = usage;
      card.querySelector('.forecast').textContent = forecastText(d);
      card.dataset.risk = (d.forecast && d.forecast.risk) || '';
      card.querySelector('.meter .fill').style.width =
        (d.total_bytes ? Math.min(100, d.used_ratio * 100) : 0).toFixed(1) + '%';
    }
    // Charts after every card's text: a chart that measures its canvas then forces one layout,
    // not one per card.
    for (const d of s.devices) drawDeviceChart(d, s);
    const host = s.host;
    const hostLine = $('host-memory');
    hostLine.hidden = !(host && (host.peak_bytes || host.leaked_bytes));
    if (!hostLine.hidden) {
      hostLine.textContent = 'Pinned host memory: ' + bytes(host.live_bytes) + ' held by ' + host.processes +
        (host.processes === 1 ? ' process' : ' processes') + ' (peak ' + bytes(host.peak_bytes) +
        (host.leaked_bytes ? ', leaked ' + bytes(host.leaked_bytes) : '') + ')';
    }
    for (const card of document.querySelectorAll('#devices .device')) {
      if (!seen.has(card.dataset.device)) {
        for (const key of [card.dataset.device, 'frag-' + card.dataset.device]) {
          const chart = state.charts[key];
          if (chart) { chart.destroy(); delete state.charts[key]; }
        }
        card.remove();
      }
    }
  }

  // "OOM risk high · +1.0 MiB/s · full in 45 s (confidence 0.82) · fragmentation 0.12,
  // largest free 1.2 GiB".
  function forecastText(d) {
    const f = d.forecast;
    if (!f) return '';
    const rate = f.growth_bytes_per_s;
    let t = 'OOM risk ' + (f.risk || 'unknown') + ' · ' + (rate >= 0 ? '+' : '−') + bytes(Math.round(Math.abs(rate))) +
      '/s · full in ' + (f.eta_s === null ? '–' : seconds(f.eta_s)) + ' (confidence ' + f.confidence.toFixed(2) + ')';
    if (d.fragmentation) t += ' · fragmentation ' + d.fragmentation.ratio.toFixed(2) + ', largest free ' +
      bytes(d.fragmentation.largest_free_bytes) + ' of ' + bytes(d.fragmentation.free_bytes);
    return t;
  }
  function seconds(v) {
    if (v < 60) return v.toFixed(0) + ' s';
    if (v < 3600) return (v / 60).toFixed(1) + ' min';
    if (v < 86400) return (v / 3600).toFixed(1) + ' h';
    return (v / 86400).toFixed(1) + ' d';
  }

  // Stacked areas: the TOP_PER_DEVICE processes with the most memory on the device over the
  // history (a process that has exited keeps its area in the past), the rest as "other".
  function deviceSeries(device, s) {
    const names = {};
    for (const sample of state.history) Object.assign(names, sample.names || {});
    for (const p of s.processes) names[procKey(p)] = p.pid + ' ' + p.comm;
    const now = {};
    for (const sample of state.history)
      for (const [k, v] of Object.entries(sample.devices[device] || {})) now[k] = Math.max(now[k] || 0, v);
    const top = Object.keys(now).sort((a, b) => now[b] - now[a]).slice(0, TOP_PER_DEVICE);
    const series = top.map((k) => ({ key: k, label: names[k] || k.split(':')[0], data: [] }));
    const other = { key: 'other', label: 'other', data: [] };
    let anyOther = false;
    for (const sample of state.history) {
      const m = sample.devices[device] || {};
      let rest = sample.totals[device] || 0;
      for (const ser of series) {
        const y = m[ser.key] || 0;
        ser.data.push({ x: sample.t, y });
        rest -= y;
      }
      if (rest) anyOther = true;
      other.data.push({ x: sample.t, y: rest });
    }
    if (anyOther) series.push(other);
    return series;
  }

  // The x axis spans the recorded history, ticks at a round step (about 5 of them).
  function timeAxis(axis) {
    const h = state.history;
    const last = h.length ? h[h.length - 1].t : Date.now();
    const first = h.length ? h[0].t : last - 1000;
    const span = Math.max(1000, last - first);
    const steps = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800].map((s) => s * 1000);
    axis.min = first;
    axis.max = first + span;
    axis.ticks.stepSize = steps.find((s) => span / s <= 5) || 3600 * 1000;
  }

  function chartOptions() {
    const options = {
      animation: false,
      parsing: false,
      normalized: true,
      responsive: true,
      maintainAspectRatio: false,
      interaction: { mode: 'index', intersect: false },
      elements: { point: { radius: 0 }, line: { borderWidth: 1, tension: 0 } },
      scales: {
        x: { type: 'linear', ticks: { maxRotation: 0, autoSkip: true, callback: (v) => clock(v) } },
        // Scaled to the data: the meter above shows the device's capacity.
        y: { stacked: true, beginAtZero: true, ticks: { maxTicksLimit: 5, callback: (v) => bytes(v) } },
      },
      plugins: {
        legend: { position: 'bottom', labels: { boxWidth: 10, font: { size: 10 } } },
        tooltip: { callbacks: { title: (items) => items.length ? clock(items[0].parsed.x) : '',
                                label: (it) => it.dataset.label + ': ' + bytes(it.parsed.y) } },
      },
    };
    timeAxis(options.scales.x);
    return options;
  }

  function seriesSummary(series) {
    return JSON.stringify(series.map((ser) => ({
      label: ser.label, last: ser.data.length ? ser.data[ser.data.length - 1].y : 0,
      max: ser.data.reduce((m, p) => Math.max(m, p.y), 0), points: ser.data.length })));
  }

  // The device's fragmentation ratio over the history (a gap where it was not measured).
  function drawFragChart(d) {
    const canvas = document.getElementById('frag-chart-' + deviceLabel(d.device));
    if (!canvas) return;
    const series = [{ key: 'frag-' + d.device, label: 'fragmentation', data: state.history.map((h) => ({
      x: h.t, y: h.frag && h.frag[d.device] !== undefined ? h.frag[d.device] : null })) }];
    state.series['frag-' + d.device] = series;
    canvas.dataset.series = seriesSummary(series.map((ser) => ({ ...ser, data: ser.data.filter((p) => p.y !== null) })));
    if (!canvas.dataset.firstSeries) canvas.dataset.firstSeries = canvas.dataset.series;
    if (!hasCharts()) return;
    const datasets = [{ label: 'fragmentation (1 − largest free / free)', data: series[0].data, fill: false,
      spanGaps: false, borderColor: 'hsla(30, 80%, 45%, 1)' }];
    const key = 'frag-' + d.device;
    let chart = state.charts[key];
    if (!chart) {
      const options = chartOptions();
      options.scales.y = { stacked: false, min: 0, max: 1, ticks: { maxTicksLimit: 3 } };
      options.plugins.legend = { display: false };  // the card's text says what it is
      options.plugins.tooltip.callbacks.label = (it) => it.dataset.label + ': ' + it.parsed.y.toFixed(3);
      chart = state.charts[key] = new window.Chart(canvas, { type: 'line', data: { datasets }, options });
    } else {
      chart.data.datasets[0].data = datasets[0].data;
      timeAxis(chart.options.scales.x);
      chart.update('none');
    }
  }

  function drawDeviceChart(d, s) {
    const series = deviceSeries(d.device, s);
    state.series[d.device] = series;
    const canvas = document.getElementById('device-chart-' + deviceLabel(d.device));
    // What the chart shows now, for tests that read the page's DOM: each area, its latest and
    // largest value and its points; the first drawing is kept too (the page's first paint).
    if (canvas) {
      canvas.dataset.series = seriesSummary(series);
      if (!canvas.dataset.firstSeries) canvas.dataset.firstSeries = canvas.dataset.series;
    }
    if (d.device >= 0) drawFragChart(d);
    if (!hasCharts()) return;
    const datasets = series.map((ser) => ({
      label: ser.label, data: ser.data, fill: true, stack: 'memory',
      borderColor: ser.key === 'other' ? 'hsla(0, 0%, 55%, 1)' : color(ser.key, 1),
      backgroundColor: ser.key === 'other' ? 'hsla(0, 0%, 55%, .35)' : color(ser.key, 0.35),
    }));
    let chart = state.charts[d.device];
    if (!chart) {
      chart = state.charts[d.device] = new window.Chart(canvas, {
        type: 'line', data: { datasets }, options: chartOptions(),
      });
    } else {
      // In place where the series are the same processes: Chart.js keeps its dataset state
      // (replacing the objects makes it rebuild every dataset on each refresh).
      const old = chart.data.datasets;
      if (old.length === datasets.length && old.every((o, i) => o.label === datasets[i].label)) {
        old.forEach((o, i) => { o.data = datasets[i].data; });
      } else {
        chart.data.datasets = datasets;
      }
      timeAxis(chart.options.scales.x);
      chart.update('none');
    }
  }

  // ---- process table ------------------------------------------------------------------------

  const COLUMNS = ['pid', 'comm', 'device', 'live', 'peak', 'leaked', 'growth', 'risk', 'aged', 'calls', 'failures'];
  const NUMERIC = new Set(['pid', 'live', 'peak', 'leaked', 'growth', 'aged', 'calls', 'failures']);
  const RISKS = ['low', 'medium', 'high', 'critical'];
  const rows = new Map();  // procKey -> tr

  function procDevices(p) {
    return p.devices.map((d) => deviceLabel(d.device)).join(', ') || '–';
  }

  function sortValue(p, key) {
    if (key === 'device') return procDevices(p);
    if (key === 'comm') return p.comm;
    const a = p.analysis;
    if (key === 'growth') return a ? a.growth_bytes_per_min : 0;
    if (key === 'risk') return a && a.risk ? RISKS.indexOf(a.risk) : -1;
    if (key === 'aged') return a && a.aged ? a.aged.bytes : -1;
    return p[key];
  }

  function newRow(p) {
    const tr = el('tr', { 'data-pid': p.pid, 'data-key': procKey(p) });
    for (const c of COLUMNS) tr.appendChild(el('td', { 'data-col': c, class: NUMERIC.has(c) ? 'num' : '' }));
    tr.addEventListener('click', () => select(p.pid));
    return tr;
  }

  function renderTable(s) {
    const tbody = document.querySelector('#processes tbody');
    const f = state.filter.toLowerCase();
    const procs = s.processes.filter((p) => !f || String(p.pid).includes(f) || p.comm.toLowerCase().includes(f));
    const { key, dir } = state.sort;
    procs.sort((a, b) => {
      const x = sortValue(a, key), y = sortValue(b, key);
      if (x < y) return -dir;
      if (x > y) return dir;
      return a.pid - b.pid;
    });
    const keep = new Set();
    let i = 0;
    for (const p of procs) {
      const k = procKey(p);
      keep.add(k);
      let tr = rows.get(k);
      if (!tr) { tr = newRow(p); rows.set(k, tr); }
      tr.dataset.state = p.state;
      tr.classList.toggle('leaked', p.leaked_bytes > 0);
      tr.classList.toggle('selected', p.pid === state.selectedPid);
      cell(tr, 'pid', String(p.pid));
      cell(tr, 'comm', p.comm || '–', p.state === 'exited' ? 'exited' : '');
      cell(tr, 'device', procDevices(p));
      cell(tr, 'live', p.state === 'exited' ? 'exited' : bytes(p.live_bytes), p.live_bytes + ' bytes');
      cell(tr, 'peak', bytes(p.peak_bytes), p.peak_bytes + ' bytes');
      cell(tr, 'leaked', p.state === 'exited' ? bytes(p.leaked_bytes) : '–', p.leaked_bytes + ' bytes');
      const a = p.analysis;
      const g = a ? a.growth_bytes_per_min : 0;
      tr.classList.toggle('growing', !!(a && a.growing));
      cell(tr, 'growth', a && p.state !== 'exited' ? (g >= 0 ? '+' : '−') + bytes(Math.round(Math.abs(g))) + '/min' : '–',
        a ? 'least-squares over the window, confidence ' + a.growth_confidence.toFixed(2) : '');
      cell(tr, 'risk', a && a.risk && p.state !== 'exited' ? a.risk : '–', a && a.worst_risk ? 'worst so far: ' + a.worst_risk : '');
      cell(tr, 'aged', a && a.aged && p.state !== 'exited' ? a.aged.count + ' · ' + bytes(a.aged.bytes) : '–',
        'outstanding allocations at least --leak-age old');
      cell(tr, 'calls', String(p.api_calls));
      cell(tr, 'failures', String(p.api_errors), p.failed_calls + ' failed allocation/free calls');
      // Move only rows that are out of place: the DOM is left alone when the order holds.
      if (tbody.children[i] !== tr) tbody.insertBefore(tr, tbody.children[i] || null);
      ++i;
    }
    const present = new Set(s.processes.map(procKey));
    for (const [k, tr] of rows) {
      if (keep.has(k)) continue;
      tr.remove();                        // filtered out, or gone
      if (!present.has(k)) rows.delete(k);
    }
    $('process-count').textContent = '(' + procs.length +
      (procs.length === s.processes.length ? '' : ' of ' + s.processes.length) + ')';
  }

  function initTable() {
    for (const th of document.querySelectorAll('#processes th[data-sort]')) {
      th.addEventListener('click', () => {
        const key = th.dataset.sort;
        state.sort = state.sort.key === key ? { key, dir: -state.sort.dir }
          : { key, dir: key === 'comm' || key === 'pid' || key === 'device' ? 1 : -1 };
        for (const o of document.querySelectorAll('#processes th')) o.removeAttribute('aria-sort');
        th.setAttribute('aria-sort', state.sort.dir > 0 ? 'ascending' : 'descending');
        if (state.snapshot) renderTable(state.snapshot);
      });
    }
    $('filter').addEventListener('input', (e) => {
      state.filter = e.target.value.trim();
      if (state.snapshot) renderTable(state.snapshot);
    });
  }

  // ---- drill-down ---------------------------------------------------------------------------

  let detailFetched = 0;
  let detailChart = null;

  function select(pid) {
    state.selectedPid = pid;
    state.detail = null;
    $('detail').hidden = false;
    $('detail').dataset.pid = pid;
    $('detail-title').textContent = 'pid ' + pid;
    refreshDetail(true);
    if (state.snapshot) renderTable(state.snapshot);
    $('detail').scrollIntoView({ behavior: 'smooth', block: 'start' });
  }

  function closeDetail() {
    state.selectedPid = null;
    state.detail = null;
    $('detail').hidden = true;
    delete $('detail').dataset.pid;
    if (detailChart) { detailChart.destroy(); detailChart = null; }
    if (state.snapshot) renderTable(state.snapshot);
  }

  async function refreshDetail(force) {
    const now = Date.now();
    if (!force && now - detailFetched < DETAIL_REFRESH_MS) return;
    detailFetched = now;
    const pid = state.selectedPid;
    try {
      const doc = await getJson('/api/v1/processes/' + pid);
      if (state.selectedPid !== pid) return;
      state.detail = doc;
      renderDetail(doc);  // the process document: its fields at the top level (API.md)
    } catch (e) {
      if (state.selectedPid !== pid) return;
      $('detail-summary').textContent = e instanceof Unauthorized ? 'token refused'
        : 'pid ' + pid + ' is no longer in the books';
    }
  }

  // rowAttrs(i): the attributes of row i (for tests that look a row up), or none.
  function fillTable(id, rowsData, rowAttrs) {
    const tbody = document.querySelector('#' + id + ' tbody');
    tbody.replaceChildren();
    for (const [i, r] of rowsData.entries()) {
      const tr = el('tr', rowAttrs ? rowAttrs(i) : {});
      for (const [text, num, pre] of r) {
        const td = el('td', num ? { class: 'num' } : {});
        if (pre) td.appendChild(el('pre', {}, text)); else td.textContent = text;
        tr.appendChild(td);
      }
      tbody.appendChild(tr);
    }
    if (!rowsData.length) {
      const tr = el('tr');
      tr.appendChild(el('td', { colspan: document.querySelectorAll('#' + id + ' thead th').length }, 'none'));
      tbody.appendChild(tr);
    }
  }

  function stackRows(stacks) {
    return stacks.map((st) => [[String(st.stack_id), true], [bytes(st.bytes), true], [String(st.allocs), true],
      [st.frames.length ? st.frames.join('\n') : '[not symbolized]', false, true]]);
  }

  function renderDetail(p) {
    $('detail-title').textContent = 'pid ' + p.pid + ' · ' + (p.comm || '–') + ' (' + p.state + ')';
    let summary = 'live ' + bytes(p.live_bytes) + ', peak ' + bytes(p.peak_bytes) + ', ' + p.allocs + ' allocations, ' +
      p.frees + ' frees, ' + p.failed_calls + ' failed calls, ' + p.launches + ' kernel launches';
    if (p.state === 'exited') summary += '; leaked ' + bytes(p.leaked_bytes) + ' in ' + p.leaked_allocs + ' allocations';
    if (p.since_attach) summary += ' (running before tracing began: counts since attach)';
    if (p.instances > 1) summary += ' · pid seen ' + p.instances + ' times, showing the latest';
    $('detail-summary').textContent = summary;
    fillTable('detail-books', p.books.map((b) => [[deviceLabel(b.device)], [b.kind], [bytes(b.live_bytes), true],
      [bytes(b.peak_bytes), true], [String(b.allocs), true], [String(b.frees), true], [String(b.failed_calls), true],
      [String(b.outstanding_allocs), true], [bytes(b.leaked_bytes), true]]));
    const listed = p.outstanding_allocations || [];
    $('detail-outstanding-note').textContent = p.outstanding_count > listed.length
      ? '(the ' + listed.length + ' largest of ' + p.outstanding_count + ')' : '';
    fillTable('detail-outstanding', listed.map((a) => [[a.ptr], [bytes(a.size), true], [deviceLabel(a.device)],
      [a.kind], [a.api], [a.stack_id === null ? '–' : String(a.stack_id), true]]));
    fillTable('detail-stacks', stackRows(p.outstanding_stacks));
    fillTable('detail-leaked-stacks', stackRows(p.leaked_stacks));
    fillTable('detail-calls', p.calls.map((c) => [[c.func], [String(c.calls), true], [String(c.errors), true],
      [c.timed ? duration(c.total_ns / c.timed) : '–', true], [duration(c.max_ns), true]]));
    fillTable('detail-kernels', (p.kernels || []).map((k) => [[k.name], [String(k.launches), true],
      [String(k.ran), true], [String(k.recorded), true], [k.ran ? duration(k.host_ns) : '–', true],
      [k.ran ? duration(k.mean_host_ns) : '–', true]]));
    const callers = p.callers || [];
    fillTable('detail-callers', callers.map((c) => [[c.object], [String(c.calls), true], [String(c.errors), true],
      [bytes(c.alloc_bytes), true], [bytes(c.free_bytes), true], [c.timed_calls ? duration(c.time_ns) : '–', true]]),
      (i) => ({ 'data-caller': callers[i].object }));
    drawDetailChart(p);
  }

  // The process's memory per device over the recorded history.
  function drawDetailChart(p) {
    const key = procKey(p);
    const devices = p.devices.map((d) => d.device);
    const series = devices.map((dev) => ({
      key: key + '@' + dev, label: 'device ' + deviceLabel(dev),
      data: state.history.map((s) => ({ x: s.t, y: (s.devices[dev] && s.devices[dev][key]) || 0 })),
    }));
    state.series.detail = series;
    if (!hasCharts()) return;
    const datasets = series.map((ser) => ({
      label: ser.label, data: ser.data, fill: true, stack: 'memory',
      borderColor: color(ser.key, 1), backgroundColor: color(ser.key, 0.35),
    }));
    if (!detailChart) {
      detailChart = new window.Chart($('detail-chart'), { type: 'line', data: { datasets }, options: chartOptions() });
    } else {
      detailChart.data.datasets = datasets;
      timeAxis(detailChart.options.scales.x);
      detailChart.update('none');
    }
  }

  // ---- health -------------------------------------------------------------------------------

  function renderHealth(s) {
    const h = s.health;
    const dl = $('health');
    dl.replaceChildren();
    const item = (name, value, bad) => { dl.append(el('dt', {}, name), el('dd', bad ? { class: 'bad' } : {}, value)); };
    item('events', String(h.events));
    item('events lost', h.events_lost ? 'yes' : 'no', h.events_lost);
    item('ring-buffer drops', String(h.rb_drops), h.rb_drops > 0);
    item('missing entry records', String(h.missing_entry), h.missing_entry > 0);
    item('alloc map full', String(h.alloc_map_full), h.alloc_map_full > 0);
    item('unmatched frees', String(h.unmatched_free));
    if (h.stacks_lost > 0) item('stacks lost (--max-stacks)', String(h.stacks_lost), true);
    item('libraries', h.libraries.length ? h.libraries.map((l) => l.path + ' (' + l.mode + ')').join('\n')
      : 'none attached');
  }

  // ---- start --------------------------------------------------------------------------------

  // /?access_token=… (how a browser opens a server that needs a token): keep it for this tab,
  // send it as a header from now on, and take it out of the address bar and history.
  function takeTokenFromAddress() {
    const params = new URLSearchParams(location.search);
    const token = params.get('access_token');
    if (token === null) return;
    state.token = token.trim();
    sessionStorage.setItem('fakegpu-token', state.token);
    params.delete('access_token');
    const rest = params.toString();
    history.replaceState(null, '', location.pathname + (rest ? '?' + rest : '') + location.hash);
  }

  function init() {
    takeTokenFromAddress();
    initTable();
    $('detail-close').addEventListener('click', closeDetail);
    $('auth-form').addEventListener('submit', (e) => {
      e.preventDefault();
      state.token = $('auth-token').value.trim();
      sessionStorage.setItem('fakegpu-token', state.token);
      closeStream();
      connect();
    });
    document.addEventListener('visibilitychange', () => { if (!document.hidden) scheduleRender(); });
    const bench = Number(new URLSearchParams(location.search).get('bench'));
    if (bench > 0) {
      // Synchronously, before the load event: --dump-dom (no virtual time) then holds the result.
      const xhr = new XMLHttpRequest();
      xhr.open('GET', '/api/v1/summary', false);
      if (state.token) xhr.setRequestHeader('Authorization', 'Bearer ' + state.token);
      xhr.send();
      if (xhr.status === 200) benchPage(JSON.parse(xhr.responseText), bench);
      return;
    }
    connect();
    // /?pid=N: a link to one process's details.
    const linked = Number(new URLSearchParams(location.search).get('pid'));
    if (Number.isInteger(linked) && linked > 0) select(linked);
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
  else init();
})();
