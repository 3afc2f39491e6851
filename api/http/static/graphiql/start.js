// Chronicle's GraphiQL page (api/http/graphiql.py). Everything comes from this server: no CDN.
//
// Queries and mutations go over HTTP POST to this page's URL; subscriptions over a WebSocket to
// the same path with graphql-transport-ws (the graphql-ws client inside GraphiQL's build). The
// Headers tab, e.g. {"Authorization": "Bearer <token>"}, is sent with every HTTP request and as
// the WebSocket's connection_init payload, which is where the server reads the token.
//
// URL parameters prefill the editors: ?q=...&variables=...&headers=... (not ?query=: a GET with
// a query parameter is a GraphQL query over GET, answered with JSON).
(function () {
  "use strict";

  var here = new URL(window.location.href);
  var endpoint = here.origin + here.pathname;
  var socket = endpoint.replace(/^http/, "ws");
  var given = here.searchParams;

  var DEFAULT_QUERY = [
    "# Chronicle's GraphQL API. Put your token in the Headers tab below:",
    '#   {"Authorization": "Bearer <token>"}',
    "# (`chronicle demo` prints a GM token). docs/api.md walks through the API.",
    "",
    "{",
    "  campaigns { name position characters { name hitPoints { current max } } }",
    "}",
    "",
  ].join("\n");

  var fetcher = GraphiQL.createFetcher({ url: endpoint, subscriptionUrl: socket });

  function remember(name, value) {
    var url = new URL(window.location.href);
    if (value) url.searchParams.set(name, value);
    else url.searchParams.delete(name);
    window.history.replaceState(null, "", url.toString());
  }

  var props = {
    fetcher: fetcher,
    defaultQuery: DEFAULT_QUERY,
    defaultEditorToolsVisibility: true,
    isHeadersEditorEnabled: true,
    shouldPersistHeaders: true,
    onEditQuery: function (value) { remember("q", value); },
    onEditVariables: function (value) { remember("variables", value); },
  };
  if (given.get("q")) props.query = given.get("q");
  if (given.get("variables")) props.variables = given.get("variables");
  if (given.get("headers")) props.headers = given.get("headers");

  ReactDOM.createRoot(document.getElementById("graphiql")).render(React.createElement(GraphiQL, props));
})();
