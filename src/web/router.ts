import { useEffect, useState } from 'preact/hooks';

/**
 * Path routes under /app (the gateway answers every page path with the app), so an Instance's
 * `url` (`/app/instances/{id}`) opens its page directly.
 */
export type Route =
  | { view: 'sign-in' }
  | { view: 'sign-up' }
  | { view: 'instances' }
  | { view: 'account' }
  | { view: 'instance'; id: string }
  | { view: 'conversations'; id: string };

export function parseRoute(path: string): Route {
  const conversations = /^\/app\/instances\/([A-Za-z0-9]+)\/conversations\/?$/.exec(path);
  if (conversations) return { view: 'conversations', id: conversations[1] as string };
  const instance = /^\/app\/instances\/([A-Za-z0-9]+)\/?$/.exec(path);
  if (instance) return { view: 'instance', id: instance[1] as string };
  if (path === '/app/sign-up') return { view: 'sign-up' };
  if (path === '/app/sign-in') return { view: 'sign-in' };
  if (path === '/app/account') return { view: 'account' };
  return { view: 'instances' };
}

export function hrefOf(route: Route): string {
  if (route.view === 'conversations') return `/app/instances/${route.id}/conversations`;
  return route.view === 'instance' ? `/app/instances/${route.id}` : `/app/${route.view}`;
}

const NAVIGATED = 'app:navigated';

export function go(route: Route, replace = false): void {
  const href = hrefOf(route);
  if (replace) history.replaceState(null, '', href);
  else history.pushState(null, '', href);
  dispatchEvent(new Event(NAVIGATED));
}

/** For links: a plain click navigates in the app; modified clicks keep the browser's meaning. */
export function onLink(route: Route) {
  return (event: MouseEvent) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    go(route);
  };
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.pathname));
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(location.pathname));
    addEventListener('popstate', onChange);
    addEventListener(NAVIGATED, onChange);
    return () => {
      removeEventListener('popstate', onChange);
      removeEventListener(NAVIGATED, onChange);
    };
  }, []);
  return route;
}
