import { invalid } from '../errors.ts';
import { UUID_PATTERN } from '../validation.ts';

/**
 * Name resolution for the assistant-tool interface (and any other caller that takes what a
 * person would type): a workflow state, kind, priority or label by id, key or name; a person by
 * email, id or name; a project by id or key; a client by id, code or name; a ticket by human id
 * or id. Ids pass through untouched, so the operation behind the tool answers for them exactly
 * as REST does; only names are looked up here.
 */

export const isUuid = (value: string): boolean => UUID_PATTERN.test(value);

/** Case- and space-insensitive form of a key or name, for matching what a person typed. */
export const fold = (value: string): string => value.trim().replace(/\s+/g, ' ').toLowerCase();

/** How many choices an error lists at most (a workspace may have many people or labels). */
export const MAX_CHOICES = 50;

/**
 * 400 `invalid` for a name that matches nothing, listing what would have matched in
 * `details.choices` (each with its id), so the caller can correct itself in one step.
 */
export function unknownName(reason: string, field: string, value: string, choices: readonly object[]): Error {
  return invalid(
    reason,
    { field, value, choices: choices.slice(0, MAX_CHOICES), ...(choices.length > MAX_CHOICES ? { moreChoices: choices.length - MAX_CHOICES } : {}) },
    `${field}: "${value}" matches nothing; pick one of details.choices (by id, key or name).`,
  );
}

/** 400 `invalid` for a name that matches more than one record; `choices` are the matches. */
export function ambiguousName(reason: string, field: string, value: string, choices: readonly object[]): Error {
  return invalid(
    reason,
    { field, value, choices: choices.slice(0, MAX_CHOICES) },
    `${field}: "${value}" matches more than one; use an id from details.choices.`,
  );
}
