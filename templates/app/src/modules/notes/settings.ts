import type { SettingDeclaration } from 'backplane';

/** The notes' runtime settings (`backplane settings`, /ops/settings): their names are public API. */
export const notesSettings = [
  { name: 'notes.page_size', group: 'notes', description: 'Notes GET /notes answers at a time', kind: 'integer', default: 50, min: 1, max: 500 },
  { name: 'notes.retention', group: 'notes', description: 'Notes older than this are deleted by the retention job', kind: 'duration', default: 365 * 86_400, min: 86_400, max: 3650 * 86_400, reasonRequired: true },
] as const satisfies readonly SettingDeclaration[];

/** One of the notes' settings: the settings reader accepts their names, each by its kind. */
export type NotesSetting = (typeof notesSettings)[number];
