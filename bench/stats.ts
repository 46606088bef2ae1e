/** Small statistics helpers; the report uses medians because single runs are noisy here. */

export function median(values: number[]): number {
  return percentile(values, 50);
}

/** Nearest-rank percentile; `values` need not be sorted. NaN for an empty list. */
export function percentile(values: ArrayLike<number>, p: number): number {
  if (values.length === 0) return NaN;
  const sorted = Float64Array.from(values).sort();
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}
