// Subscribe with the npm graphql-ws client, drop the connection, resume from the last position.
// Usage: node resume.mjs HTTP_URL TOKEN CAMPAIGN_GID START_POSITION
// Prints one JSON line: {"positions": [...], "final": N}
import { createClient } from "graphql-ws";
import WebSocket from "ws";

const [url, token, campaignId, startArg] = process.argv.slice(2);
const wsUrl = url.replace(/^http/, "ws") + "/graphql";
const SUB = `subscription($c: ID!, $a: Int) { campaignFacts(campaignId: $c, afterPosition: $a) {
  position type outcome changes { creatureId fields { field before after } } dice { faces } } }`;

async function gql(query, variables) {
  const res = await fetch(url + "/graphql", {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = await res.json();
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data;
}

async function advance(n) {
  for (let i = 0; i < n; i++) {
    const out = await gql(
      `mutation($i: AdvanceTimeInput!) { advanceTime(input: $i) { position userErrors { code } } }`,
      { i: { campaignId, minutes: 1 } },
    );
    if (out.advanceTime.userErrors.length) throw new Error(JSON.stringify(out));
  }
}

function collect(after, want, onStarted) {
  const client = createClient({
    url: wsUrl,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${token}` },
    retryAttempts: 0,
  });
  const got = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timeout; got ${JSON.stringify(got)}`)), 20000);
    let started = false;
    const dispose = client.subscribe(
      { query: SUB, variables: { c: campaignId, a: after } },
      {
        next: (msg) => {
          if (msg.errors) { clearTimeout(timer); reject(new Error(JSON.stringify(msg.errors))); return; }
          got.push(msg.data.campaignFacts.position);
          if (!started && onStarted) { started = true; onStarted().catch(reject); }
          if (got.length >= want) {
            clearTimeout(timer);
            dispose();
            client.dispose(); // drop the connection
            resolve(got);
          }
        },
        error: (e) => { clearTimeout(timer); reject(e instanceof Error ? e : new Error(JSON.stringify(e))); },
        complete: () => {},
      },
    );
  });
}

const start = Number(startArg);
await advance(3);
// first connection: the three facts after START, then drop
const first = await collect(start, 3);
const last = first[first.length - 1];
// written while nobody listens
await advance(3);
// resume from the last position received; two more facts arrive live while subscribed
const second = await collect(last, 5, () => advance(2));
const final = (await gql(`query($c: ID!) { campaign(id: $c) { position } }`, { c: campaignId })).campaign.position;
console.log(JSON.stringify({ positions: [...first, ...second], final }));
process.exit(0);
