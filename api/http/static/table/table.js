// Chronicle's live table page (api/http/table.py): plain JavaScript, no build step, no CDN.
//
// Everything is read through the public GraphQL API with the page's token:
// - a query for the table (campaign, active encounter, characters with their tracks, effects,
//   the last lines of the log), run again whenever the campaign moves;
// - the campaignFacts subscription over a WebSocket (graphql-transport-ws, written here by
//   hand: connection_init with the token, subscribe, next/error/complete, ping/pong). It starts
//   after the position the first answer showed and, after a dropped connection, resumes after
//   the last position it received, so no fact is missed or counted twice. A connection that
//   goes quiet is pinged; one that does not answer is given up and replaced (a TV's Wi-Fi).
//
// The token comes once in the URL, #token=... (never sent to any server) or ?token=..., is
// kept in this browser's localStorage for this campaign and removed from the address bar;
// "Forget the token" removes it. window.chronicleTable exposes the page's state (tests).
(function () {
  "use strict";

  var LOG_LINES = 12;
  var RETRY_MS = [250, 500, 1000, 2000, 4000];
  var body = document.body;
  var campaign = body.dataset.campaign;
  var httpUrl = new URL(body.dataset.graphql, window.location.href).toString();
  var wsUrl = httpUrl.replace(/^http/, "ws");
  var storageKey = "chronicle.table." + campaign;

  var CHARACTER = [
    "fragment Creature on Character {",
    "  id creatureId name kind level lifeState",
    "  hitPoints { current max temporary }",
    "  tracks { key label value ceiling floor thresholds { label value } }",
    "  conditions",
    "  effects { effectId name source conditions pending duration { kind anchor details } }",
    "}",
  ].join("\n");
  var TABLE = [
    "query Table($c: ID!, $lines: Int!) {",
    "  campaign(id: $c) {",
    "    name ruleset position clockMinutes",
    "    activeEncounter {",
    "      encounterId name state round surpriseRound turnOfCreatureId order delayed surprised",
    "      initiative { creatureId total details }",
    "      participants { ...Creature }",
    "    }",
    "    characters(kind: PC) { ...Creature }",
    "    log(last: $lines) { nodes { position type text status } }",
    "  }",
    "}",
    CHARACTER,
  ].join("\n");
  var FACTS = [
    "subscription Facts($c: ID!, $after: Int) {",
    "  campaignFacts(campaignId: $c, afterPosition: $after) { position type }",
    "}",
  ].join("\n");

  var state = {
    campaign: campaign,
    token: null,
    status: "connecting",
    shown: -1, // the position the page shows
    last: -1, // the last position the subscription delivered (resume after it)
    wanted: -1, // the newest position known to exist
    received: [], // every position the subscription delivered, in order (the last 5000)
    gaps: [], // positions that arrived out of sequence (there should never be any)
    reconnects: 0,
    fetching: false,
    again: false,
    socket: null,
    retry: 0,
    stopped: false,
    generation: 0,
    heartbeat: { every: 15000, within: 5000 }, // ms: ping after this much quiet; give up after that
    abandoned: 0, // connections given up for lack of an answer
    renders: 0,
  };
  window.chronicleTable = state;

  // ------------------------------------------------------------------ the token
  function takeToken() {
    var url = new URL(window.location.href);
    var hash = new URLSearchParams(url.hash.replace(/^#/, ""));
    var given = hash.get("token") || url.searchParams.get("token");
    if (hash.has("token") || url.searchParams.has("token")) {
      hash.delete("token");
      url.searchParams.delete("token");
      url.hash = hash.toString();
      window.history.replaceState(null, "", url.toString());
    }
    if (given) {
      remember(given);
      return given;
    }
    try {
      return window.localStorage.getItem(storageKey);
    } catch (e) {
      return null;
    }
  }

  function remember(token) {
    try {
      window.localStorage.setItem(storageKey, token);
    } catch (e) {
      /* storage refused (private mode): the token lives as long as the page */
    }
  }

  function forget() {
    try {
      window.localStorage.removeItem(storageKey);
    } catch (e) {
      /* nothing kept */
    }
  }

  // ------------------------------------------------------------------ small DOM helpers
  function $(id) {
    return document.getElementById(id);
  }

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
  }

  function words(value) {
    return String(value || "").replace(/_/g, " ").toLowerCase();
  }

  function elapsed(minutes) {
    var parts = [];
    var days = Math.floor(minutes / 1440), hours = Math.floor((minutes % 1440) / 60);
    if (days) parts.push(days + " d");
    if (hours) parts.push(hours + " h");
    if (minutes % 60 || !parts.length) parts.push((minutes % 60) + " min");
    return parts.join(" ");
  }

  function setStatus(status, text) {
    state.status = status;
    var node = $("status");
    node.className = "status " + status;
    node.textContent = text || status;
  }

  // ------------------------------------------------------------------ GraphQL over HTTP
  function ApiError(code, message) {
    this.code = code;
    this.message = message;
  }

  function firstError(errors) {
    var e = errors[0] || {};
    var code = (e.extensions && e.extensions.code) || "ERROR";
    return new ApiError(code, e.message || code);
  }

  function query(text, variables) {
    return window
      .fetch(httpUrl, {
        method: "POST",
        headers: { "Content-Type": "application/json", Authorization: "Bearer " + state.token },
        body: JSON.stringify({ query: text, variables: variables }),
        cache: "no-store",
      })
      .then(function (response) {
        return response.json();
      })
      .then(function (answer) {
        if (answer.errors && answer.errors.length) throw firstError(answer.errors);
        return answer.data;
      });
  }

  // ------------------------------------------------------------------ the table, drawn
  function durationText(effect, names) {
    var d = effect.duration || {};
    var details = d.details || {};
    var text = words(d.kind || "until removed");
    if (d.anchor) text += " (" + (names[d.anchor] || d.anchor) + ")";
    if (typeof details.rounds === "number") text += ", " + details.rounds + " rounds";
    if (typeof details.remaining === "number") text += ", " + details.remaining + " left";
    if (effect.pending) text += ", pending";
    return text;
  }

  function bar(track) {
    // A bar from the track's floor (or its lowest threshold, or 0) to its ceiling.
    var values = [track.value, 0];
    track.thresholds.forEach(function (t) {
      values.push(t.value);
    });
    var lo = track.floor !== null ? Math.min(track.floor, track.value) : Math.min.apply(null, values);
    var hi = Math.max(track.ceiling !== null ? track.ceiling : track.value, track.value, lo + 1);
    var share = function (v) {
      return Math.max(0, Math.min(100, ((v - lo) * 100) / (hi - lo)));
    };
    var row = el("div", "track track-" + track.key.replace(/[^a-z0-9_-]/gi, ""));
    row.dataset.key = track.key;
    row.dataset.value = String(track.value);
    var label = el("span", "track-label", track.label);
    var meter = el("span", "meter");
    meter.setAttribute("role", "meter");
    meter.setAttribute("aria-label", track.label);
    meter.setAttribute("aria-valuemin", String(lo));
    meter.setAttribute("aria-valuemax", String(hi));
    meter.setAttribute("aria-valuenow", String(track.value));
    var fill = el("span", "fill");
    fill.style.width = share(track.value) + "%";
    var below = track.thresholds.filter(function (t) {
      return track.value <= t.value;
    });
    if (below.length) fill.classList.add("low");
    meter.appendChild(fill);
    track.thresholds.forEach(function (t) {
      if (t.value <= lo || t.value >= hi) return;
      var tick = el("span", "tick");
      tick.style.left = share(t.value) + "%";
      tick.title = t.label + " at " + t.value;
      meter.appendChild(tick);
    });
    var value = el("span", "track-value", track.value + (track.ceiling !== null ? " / " + track.ceiling : ""));
    if (below.length) value.title = below[below.length - 1].label;
    row.appendChild(label);
    row.appendChild(meter);
    row.appendChild(value);
    return row;
  }

  function tracksOf(c) {
    var tracks = c.tracks.filter(function (t) {
      return !(t.value === 0 && (t.ceiling === 0 || t.ceiling === null)); // nothing to show
    });
    var hasHp = c.tracks.some(function (t) {
      return t.key === "hp";
    });
    if (!hasHp && c.hitPoints) {
      tracks.unshift({
        key: "hp",
        label: "HP",
        value: c.hitPoints.current,
        ceiling: c.hitPoints.max,
        floor: 0,
        thresholds: [],
      });
    }
    return tracks;
  }

  function card(c, turnOf, names) {
    var node = el("article", "character kind-" + words(c.kind) + " life-" + words(c.lifeState));
    node.dataset.creature = c.creatureId;
    if (c.creatureId === turnOf) node.classList.add("turn");
    var head = el("h3");
    head.appendChild(el("span", "name", c.name));
    if (words(c.lifeState) !== "active") head.appendChild(el("span", "life", words(c.lifeState)));
    if (c.hitPoints && c.hitPoints.temporary) head.appendChild(el("span", "temp", "+" + c.hitPoints.temporary + " temp"));
    node.appendChild(head);
    tracksOf(c).forEach(function (t) {
      node.appendChild(bar(t));
    });
    var effects = el("ul", "effects");
    var named = {};
    c.effects.forEach(function (e) {
      var item = el("li", "effect");
      item.dataset.effect = e.effectId;
      var what = e.name || e.conditions.join(", ") || e.effectId;
      item.appendChild(el("span", "effect-name", what));
      item.appendChild(el("span", "duration", durationText(e, names)));
      effects.appendChild(item);
      e.conditions.forEach(function (k) {
        named[k] = true;
      });
    });
    c.conditions.forEach(function (k) {
      if (named[k]) return;
      var item = el("li", "effect condition");
      item.appendChild(el("span", "effect-name", words(k)));
      effects.appendChild(item);
    });
    if (effects.firstChild) node.appendChild(effects);
    return node;
  }

  function render(data) {
    var camp = data.campaign;
    var enc = camp.activeEncounter;
    document.title = camp.name + " · table";
    $("campaign-name").textContent = camp.name;
    $("clock").textContent = "in-world time " + elapsed(camp.clockMinutes);
    $("position").textContent = "#" + camp.position;

    var byId = {};
    var names = {};
    var shown = [];
    var add = function (c) {
      names[c.creatureId] = c.name;
      if (!byId[c.creatureId]) shown.push(c.creatureId);
      byId[c.creatureId] = c;
    };
    if (enc) enc.participants.forEach(add);
    camp.characters.forEach(add);

    // initiative
    var title = $("encounter-title");
    var round = $("round");
    var order = $("initiative");
    clear(order);
    if (enc) {
      title.textContent = enc.name || "Encounter";
      round.textContent =
        enc.state === "setup" ? "Rolling initiative" : enc.surpriseRound ? "Surprise round" : "Round " + enc.round;
      var scores = {};
      enc.initiative.forEach(function (i) {
        var d = i.details || {};
        scores[i.creatureId] = i.total !== null ? i.total : d.score !== undefined ? d.score : d.total;
      });
      var ids = enc.order.length ? enc.order : enc.participants.map(function (c) {
        return c.creatureId;
      });
      ids.forEach(function (cid) {
        var c = byId[cid];
        var item = el("li", "");
        item.dataset.creature = cid;
        if (cid === enc.turnOfCreatureId) {
          item.classList.add("turn");
          item.setAttribute("aria-current", "true");
        }
        if (c) item.classList.add("kind-" + words(c.kind), "life-" + words(c.lifeState));
        if (enc.delayed.indexOf(cid) >= 0) item.classList.add("delayed");
        item.appendChild(el("span", "who", c ? c.name : cid));
        if (scores[cid] !== undefined && scores[cid] !== null) item.appendChild(el("span", "score", scores[cid]));
        if (enc.delayed.indexOf(cid) >= 0) item.appendChild(el("span", "note", "delaying"));
        order.appendChild(item);
      });
      shown.sort(function (a, b) {
        var ia = ids.indexOf(a), ib = ids.indexOf(b);
        return (ia < 0 ? 1e9 : ia) - (ib < 0 ? 1e9 : ib);
      });
    } else {
      title.textContent = "No encounter running";
      round.textContent = "";
    }

    // characters
    var box = $("characters");
    clear(box);
    shown.forEach(function (cid) {
      box.appendChild(card(byId[cid], enc ? enc.turnOfCreatureId : null, names));
    });

    // the log, newest first
    var lines = $("log-lines");
    clear(lines);
    camp.log.nodes.slice().reverse().forEach(function (line) {
      var status = line.status.map(words).filter(function (s) {
        return s !== "active";
      });
      var item = el("li", ["fact"].concat(status).join(" "));
      item.dataset.position = String(line.position);
      item.appendChild(el("span", "pos", "#" + line.position));
      status.forEach(function (s) {
        item.appendChild(el("span", "badge " + s, s));
      });
      // a revoked fact's line is "~~sentence~~ (revoked at N: reason)": strike the sentence only
      var struck = /^~~([\s\S]*?)~~([\s\S]*)$/.exec(line.text);
      item.appendChild(el("span", "text", struck ? struck[1] : line.text));
      if (struck && struck[2]) item.appendChild(el("span", "note", struck[2].trim()));
      lines.appendChild(item);
    });

    state.shown = camp.position;
    state.renders += 1;
    body.dataset.position = String(camp.position);
  }

  // ------------------------------------------------------------------ refresh on news
  function refresh() {
    if (state.stopped) return;
    if (state.fetching) {
      state.again = true;
      return;
    }
    state.fetching = true;
    state.again = false;
    query(TABLE, { c: campaign, lines: LOG_LINES })
      .then(function (data) {
        $("login").hidden = true;
        $("table").hidden = false;
        render(data);
        if (state.last < 0) {
          state.last = state.shown; // the stream starts after what the first answer showed
          connect();
        }
      })
      .catch(function (err) {
        if (err instanceof ApiError) refused(err);
        else {
          setStatus("offline", "offline, retrying");
          state.again = true;
        }
      })
      .then(function () {
        state.fetching = false;
        if (state.stopped) return;
        if (state.again) window.setTimeout(refresh, state.status === "offline" ? 2000 : 0);
        else if (state.wanted > state.shown) window.setTimeout(refresh, 200); // a replica behind
      });
  }

  function refused(err) {
    if (err.code === "UNAUTHENTICATED" || err.code === "NOT_FOUND" || err.code === "FORBIDDEN" || err.code === "INVALID_ID") {
      stop();
      forget();
      login(
        err.code === "UNAUTHENTICATED"
          ? "The token was not accepted (unknown or revoked). Enter a token of this campaign."
          : "This token cannot read this campaign. Enter a token of this campaign."
      );
    } else {
      setStatus("error", err.code + ": " + err.message);
    }
  }

  // ------------------------------------------------------------------ the live stream
  function connect() {
    if (state.stopped || state.socket || state.last < 0) return; // (a refresh connects first)
    var socket = new WebSocket(wsUrl, "graphql-transport-ws");
    var generation = state.generation;
    var subscribed = false;
    var heard = Date.now(); // the last time the server said anything (or when this began)
    var pinged = false;
    var done = false;
    state.socket = socket;
    var send = function (message) {
      socket.send(JSON.stringify(message));
    };
    // A connection can die without closing (Wi-Fi gone, a frozen server, a NAT that forgot it):
    // when the server has been quiet for a while, ping it; no answer in time, start over.
    var watch = window.setInterval(function () {
      var quiet = Date.now() - heard;
      var hb = state.heartbeat;
      if (quiet > hb.every + hb.within) lost(true);
      else if (quiet > hb.every && !pinged && socket.readyState === 1) {
        pinged = true;
        send({ type: "ping" });
      }
    }, 100);
    var lost = function (abandon) {
      if (done) return;
      done = true;
      window.clearInterval(watch);
      if (abandon) {
        // do not wait for a closing handshake a dead peer will never answer
        socket.onopen = socket.onmessage = socket.onclose = null;
        try {
          socket.close(4408, "no answer");
        } catch (e) {
          /* already closing */
        }
        state.abandoned += 1;
      }
      if (state.socket === socket) state.socket = null;
      if (state.stopped || generation !== state.generation) return; // stopped, or replaced
      state.reconnects += subscribed ? 1 : 0;
      var wait = RETRY_MS[Math.min(state.retry, RETRY_MS.length - 1)];
      state.retry += 1;
      setStatus("reconnecting", "reconnecting");
      window.setTimeout(connect, wait);
    };
    socket.onopen = function () {
      send({ type: "connection_init", payload: { authorization: "Bearer " + state.token } });
    };
    socket.onmessage = function (event) {
      heard = Date.now();
      pinged = false;
      var message = JSON.parse(event.data);
      if (message.type === "connection_ack") {
        state.retry = 0;
        subscribed = true;
        send({ id: "facts", type: "subscribe", payload: { query: FACTS, variables: { c: campaign, after: state.last } } });
        setStatus("live", "live");
        refresh(); // whatever changed while the page was away
      } else if (message.type === "next") {
        var payload = message.payload || {};
        if (payload.errors && payload.errors.length) return streamError(firstError(payload.errors), socket);
        fact(payload.data.campaignFacts);
      } else if (message.type === "error") {
        streamError(firstError(message.payload || []), socket);
      } else if (message.type === "complete") {
        socket.close(1000);
      } else if (message.type === "ping") {
        send({ type: "pong" });
      }
    };
    socket.onclose = function () {
      lost(false);
    };
  }

  function fact(f) {
    if (f.position <= state.last) return; // already had it
    if (f.position !== state.last + 1) state.gaps.push(f.position);
    state.last = f.position;
    state.received.push(f.position);
    if (state.received.length > 5000) state.received.splice(0, state.received.length - 5000);
    if (f.position > state.wanted) state.wanted = f.position;
    if (state.wanted > state.shown) refresh();
  }

  function streamError(err, socket) {
    if (err.code === "POSITION_OUT_OF_RANGE") {
      state.last = -1; // the store went back (a restore): start again from what it has
      state.received = [];
      socket.close(1000);
      refresh();
      return;
    }
    refused(err);
    socket.close(1000);
  }

  // ------------------------------------------------------------------ start, stop, log in
  function stop() {
    state.stopped = true;
    state.generation += 1;
    if (state.socket) state.socket.close(1000);
    state.socket = null;
  }

  function start(token) {
    state.token = token;
    state.stopped = false;
    state.last = -1;
    setStatus("connecting", "connecting");
    refresh();
  }

  function login(reason) {
    setStatus("signed-out", "no token");
    $("table").hidden = true;
    $("login").hidden = false;
    $("login-reason").textContent = reason;
  }

  $("login").addEventListener("submit", function (event) {
    event.preventDefault();
    var token = $("token").value.trim();
    if (!token) return;
    $("token").value = "";
    remember(token);
    start(token);
  });

  $("forget").addEventListener("click", function () {
    stop();
    forget();
    state.token = null;
    login("The token was removed from this device. Enter a token of this campaign.");
  });

  var token = takeToken();
  if (token) start(token);
  else login("This page needs a token of the campaign (a viewer token is enough).");
})();
