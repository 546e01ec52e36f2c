/**
 * The REST API's routes as the gateway names them. The client names a route by its method and
 * path template below the base path (`GET /deposits/{id}`): the circuit breakers and /readyz key
 * on that. Metrics and spans name it with the base path, and nowhere else builds those labels.
 */

/** Where the spec puts every route of the REST API, below the configured base URL. */
export const BASE_PATH = '/external/v1';

export interface RouteLabels {
  /** As the client names it: `GET /deposits/{id}`. */
  route: string;
  method: string;
  /** The path template with the base path: `/external/v1/deposits/{id}` (metrics' `route` label). */
  template: string;
  /** The span name: `GET /external/v1/deposits/{id}`. */
  name: string;
}

/** Made once per route: the client's routes are a handful of constants, so this stays that small. */
const labelled = new Map<string, RouteLabels>();

/** The labels of a route named `METHOD /template`. */
export function routeLabels(route: string): RouteLabels {
  let labels = labelled.get(route);
  if (!labels) {
    const [method = 'GET', template = route] = route.split(' ');
    labels = { route, method, template: BASE_PATH + template, name: `${method} ${BASE_PATH}${template}` };
    labelled.set(route, labels);
  }
  return labels;
}
