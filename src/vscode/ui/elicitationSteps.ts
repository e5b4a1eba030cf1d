import type { ElicitationContent, ElicitationValue, FormField } from '../../core';

// The questions of an elicitation and their answers: the forms (../elicitation/forms.ts) answer them, the
// lazy loader (../elicitation/ui.ts) hands them on. A leaf file, so the two need not import each other.

export type FieldAnswer = { value: ElicitationValue } | 'skip' | 'back' | undefined;
export type ReviewAnswer = 'send' | { edit: number } | undefined;
export interface FieldStep {
  title: string;
  field: FormField;
  current: unknown;
  canGoBack: boolean;
}
export interface ReviewStep {
  server: string;
  title: string;
  fields: FormField[];
  content: ElicitationContent;
  /** Why the answers cannot be sent as they are (ajv against requestedSchema); Send is not offered then. */
  problem?: string;
}

/**
 * Every question an elicitation asks the person. Each one ends (undefined) when `signal` fires,
 * which is how a form the server cancels closes. Tests replace single methods.
 */
export interface ElicitationUi {
  consent(server: string, message: string, fields: FormField[], signal: AbortSignal): Promise<'respond' | 'decline' | undefined>;
  askField(step: FieldStep, signal: AbortSignal): Promise<FieldAnswer>;
  review(step: ReviewStep, signal: AbortSignal): Promise<ReviewAnswer>;
  /** The consent for one page; 'open' once the person agreed and the page was opened. */
  openPage(server: string, url: URL, message: string, signal: AbortSignal): Promise<'open' | 'decline' | undefined>;
  /** After -32042 pages were opened: 'completed' when the server reports them done, else the person's Retry or stop. */
  waitForPages(server: string, what: string, allCompleted: Promise<void>, signal: AbortSignal): Promise<'completed' | 'retry' | 'stop'>;
}
