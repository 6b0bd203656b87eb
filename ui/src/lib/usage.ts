// The usage meter's words and numbers.
import type { UsageInfo } from './session-store';

/** 12_345 -> "12.3k", 1_200_000 -> "1.2M". */
export function compactNumber(n: number): string {
  const abs = Math.abs(n);
  if (abs >= 1_000_000) return `${trim(n / 1_000_000)}M`;
  if (abs >= 1_000) return `${trim(n / 1_000)}k`;
  return String(Math.round(n));
}

function trim(x: number): string {
  return x >= 100 ? Math.round(x).toString() : x.toFixed(1).replace(/\.0$/, '');
}

export function formatCost(amount: number, currency: string): string {
  try {
    return new Intl.NumberFormat('en-US', {
      style: 'currency',
      currency,
      minimumFractionDigits: 2,
      // Cents hide what a turn costs while it is small: $0.037, not $0.04.
      maximumFractionDigits: amount > 0 && amount < 0.01 ? 4 : amount < 1 ? 3 : 2,
    }).format(amount);
  } catch {
    // Not an ISO 4217 code: say it as the agent did.
    return `${amount.toFixed(2)} ${currency}`;
  }
}

export interface UsageText {
  /** 0..100, null when the context size is unknown. */
  percent: number | null;
  /** Short text beside the bar. */
  short: string;
  /** Everything, for the tooltip. */
  long: string;
  /** What the meter shows, said in words (its accessible name). */
  label: string;
  cost: string | null;
  tokens: string | null;
}

export function usageText(u: UsageInfo): UsageText {
  const percent = u.size > 0 ? Math.min(100, Math.round((u.used / u.size) * 100)) : null;
  const cost = u.cost ? formatCost(u.cost.amount, u.cost.currency) : null;
  // The engine produces no token counts yet (ACP's usage_update carries none; events/mod.rs says
  // why): `tokens` stays null until it does, and the header shows nothing for it.
  const tokens =
    u.tokensIn !== null || u.tokensOut !== null
      ? `${compactNumber(u.tokensIn ?? 0)} in · ${compactNumber(u.tokensOut ?? 0)} out`
      : null;
  const lines = [
    percent === null
      ? `Context used: ${u.used.toLocaleString('en-US')} tokens`
      : `Context used: ${u.used.toLocaleString('en-US')} of ${u.size.toLocaleString('en-US')} tokens (${percent}%)`,
  ];
  if (tokens) lines.push(`Tokens: ${tokens}`);
  if (cost) lines.push(`Cost so far: ${cost}`);
  if (u.model) lines.push(`Model: ${u.model}`);
  const short = percent === null ? compactNumber(u.used) : `${percent}%`;
  const label = [
    percent === null ? `Context used: ${short} tokens` : `Context used: ${short}`,
    ...(cost ? [`cost so far: ${cost}`] : []),
  ].join(', ');
  return {
    percent,
    short,
    long: lines.join('\n'),
    label,
    cost,
    tokens,
  };
}
