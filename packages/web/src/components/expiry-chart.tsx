import { useId } from 'react';
import { formatDate } from '../format';

/**
 * Certificates expiring per week (the server's bins, GET /api/v1/dashboard/overview), as an SVG
 * bar chart with a title and a description for screen readers (each bar is labelled too).
 */
export function ExpiryChart({ bins }: { bins: { start: Date; end: Date; count: number }[] }) {
  const titleId = useId();
  const descId = useId();
  const max = Math.max(1, ...bins.map((b) => b.count));
  const width = 640;
  const height = 200;
  const pad = { top: 16, bottom: 36, left: 32, right: 8 };
  const barSpace = (width - pad.left - pad.right) / Math.max(1, bins.length);
  const scale = (height - pad.top - pad.bottom) / max;
  const total = bins.reduce((sum, b) => sum + b.count, 0);
  return (
    <figure className="chart">
      <svg
        viewBox={`0 0 ${width} ${height}`}
        role="img"
        aria-labelledby={`${titleId} ${descId}`}
        preserveAspectRatio="xMidYMid meet"
      >
        <title id={titleId}>Certificates expiring in the next {bins.length} weeks, by week</title>
        <desc id={descId}>
          {total === 1 ? '1 certificate expires' : `${total} certificates expire`} in the next {bins.length}{' '}
          weeks.{' '}
          {bins
            .filter((b) => b.count > 0)
            .map((b) => `${b.count} in the week from ${formatDate(b.start, false)}`)
            .join('; ')}
        </desc>
        <line
          x1={pad.left}
          x2={width - pad.right}
          y1={height - pad.bottom}
          y2={height - pad.bottom}
          className="axis"
        />
        <text x={pad.left - 6} y={pad.top + 4} className="tick" textAnchor="end">
          {max}
        </text>
        <text x={pad.left - 6} y={height - pad.bottom} className="tick" textAnchor="end">
          0
        </text>
        {bins.map((bin, index) => {
          const barHeight = bin.count * scale;
          const x = pad.left + index * barSpace + 3;
          const y = height - pad.bottom - barHeight;
          return (
            <g key={bin.start.toISOString()} data-count={bin.count}>
              <rect
                x={x}
                y={y}
                width={Math.max(1, barSpace - 6)}
                height={barHeight}
                className={index < 1 ? 'bar bar-soon' : 'bar'}
              >
                <title>{`${bin.count} expiring ${formatDate(bin.start, false)} – ${formatDate(bin.end, false)}`}</title>
              </rect>
              {bin.count > 0 ? (
                <text x={x + (barSpace - 6) / 2} y={y - 3} className="value" textAnchor="middle">
                  {bin.count}
                </text>
              ) : null}
              {index % 2 === 0 ? (
                <text x={x} y={height - pad.bottom + 16} className="tick">
                  {bin.start.toLocaleDateString(undefined, { month: 'short', day: 'numeric' })}
                </text>
              ) : null}
            </g>
          );
        })}
      </svg>
      <figcaption className="muted">
        {total} expiring within {bins.length} weeks · bars are weeks from now
      </figcaption>
    </figure>
  );
}
