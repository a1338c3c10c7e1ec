import { Link, useRouterState } from '@tanstack/react-router';

/** An address the console has no page for, shown inside the app shell with the way back. */
export default function NotFound() {
  const path = useRouterState({ select: (s) => s.location.pathname });
  return (
    <>
      <h1>Page not found</h1>
      <p>
        The console has no page at <code>{path}</code>. It may have moved, or the link was mistyped.
      </p>
      <p>
        <Link to="/" className="button primary">
          Go to the dashboard
        </Link>{' '}
        or press <kbd>Ctrl K</kbd> to search.
      </p>
    </>
  );
}
