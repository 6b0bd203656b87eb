// What the header's controls are, in words: a picker shows only its current value ("Medium",
// "Demo Swift"), so its tooltip and accessible name say which setting it is. The words come
// from the agent (the option's name) and the protocol (its category), never from a guess at
// the option's id.
import type {
  SessionConfigOption,
  SessionConfigSelectGroup,
  SessionConfigSelectOption,
  SessionMode,
} from './generated/ipc';

/** The categories ACP names (others, `_`-prefixed ones included, say nothing more). */
const CATEGORY_WORDS: Record<string, string> = {
  mode: 'Mode',
  model: 'Model',
  model_config: 'Model setting',
  thought_level: 'Thought level',
};

/** What the option is: its own name, and its category when that says more ("Thinking
 * (thought level)"); the category alone when the agent gave no name. */
export function optionLabel(o: Pick<SessionConfigOption, 'name' | 'category'>): string {
  const kind = o.category ? CATEGORY_WORDS[o.category] : undefined;
  const name = o.name.trim();
  if (name === '') return kind ?? 'Setting';
  if (!kind || name.toLowerCase() === kind.toLowerCase()) return name;
  return `${name} (${kind.toLowerCase()})`;
}

function selectChoices(
  list: SessionConfigSelectOption[] | SessionConfigSelectGroup[],
): SessionConfigSelectOption[] {
  return list.flatMap((v) => ('group' in v ? v.options : [v]));
}

/** The tooltip: what the option is and what it is set to, then the agent's description. */
export function optionTooltip(o: SessionConfigOption): string {
  const value =
    o.type === 'boolean'
      ? o.currentValue
        ? 'on'
        : 'off'
      : (selectChoices(o.options).find((v) => v.value === o.currentValue)?.name ?? o.currentValue);
  return withDescription(`${optionLabel(o)}: ${value}`, o.description);
}

/** The same for the older mode list (`session/set_mode`). */
export function modeTooltip(current: SessionMode | undefined): string {
  return withDescription(`Mode: ${current?.name ?? 'none chosen'}`, current?.description);
}

function withDescription(line: string, description: string | null | undefined): string {
  const d = description?.trim();
  return d ? `${line}\n${d}` : line;
}
