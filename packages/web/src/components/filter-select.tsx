/**
 * A list filter bound to one URL search key: "Any" clears it, the other options are the values
 * the API accepts (the lists in list-search.ts, checked against the OpenAPI document).
 */
export function FilterSelect<T extends string>({
  label,
  value,
  options,
  labels,
  onChange,
}: {
  label: string;
  value: T | undefined;
  options: readonly T[];
  /** Display text per value; the value itself where absent. */
  labels?: Partial<Record<T, string>>;
  onChange: (value: T | undefined) => void;
}) {
  return (
    <label>
      {label}
      <select value={value ?? ''} onChange={(e) => onChange((e.target.value || undefined) as T | undefined)}>
        <option value="">Any</option>
        {options.map((option) => (
          <option key={option} value={option}>
            {labels?.[option] ?? option}
          </option>
        ))}
      </select>
    </label>
  );
}
