/**
 * The colour theme: the system's `prefers-color-scheme` unless the operator picked one, which is
 * kept in local storage and applied as `html[data-theme]` (styles.css reads it).
 */
export type ThemeChoice = 'system' | 'light' | 'dark';

const KEY = 'certwright.theme';
export const THEME_CHOICES: readonly ThemeChoice[] = ['system', 'light', 'dark'];

export function storedTheme(): ThemeChoice {
  try {
    const value = localStorage.getItem(KEY);
    return value === 'light' || value === 'dark' ? value : 'system';
  } catch {
    return 'system';
  }
}

export function applyTheme(choice: ThemeChoice): void {
  const root = document.documentElement;
  if (choice === 'system') delete root.dataset.theme;
  else root.dataset.theme = choice;
  try {
    if (choice === 'system') localStorage.removeItem(KEY);
    else localStorage.setItem(KEY, choice);
  } catch {
    // Storage may be unavailable (private windows); the choice then lasts for this page only.
  }
}

/** system → light → dark → system. */
export const nextTheme = (choice: ThemeChoice): ThemeChoice =>
  THEME_CHOICES[(THEME_CHOICES.indexOf(choice) + 1) % THEME_CHOICES.length] as ThemeChoice;
