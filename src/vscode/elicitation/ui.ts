import type * as vscode from 'vscode';
import {
  describeFieldValue,
  formatPropertyValue,
  multiSelectProblem,
  parsePropertyInput,
  pickedValues,
  type FormField,
  type Redact,
} from '../../core';
import type * as FormsModule from './forms';
import type { ElicitationUi, FieldAnswer, FieldStep, ReviewAnswer, ReviewStep } from '../ui/elicitationSteps';

/**
 * The real questions, loaded from dist/forms.js (./forms.ts) when the first form or page asks one:
 * most sessions never see an elicitation, so the main bundle does not carry the form code.
 */
export class LazyElicitationUi implements ElicitationUi {
  private loaded: ReturnType<typeof FormsModule.createQuickInputUi> | undefined;

  /** `redact`: the host's, for the server's texts the forms show. */
  constructor(private readonly redact: Redact) {}

  private get real(): ReturnType<typeof FormsModule.createQuickInputUi> {
    this.loaded ??= (require('./forms.js') as typeof FormsModule).createQuickInputUi(
      {
        describeFieldValue,
        formatPropertyValue,
        multiSelectProblem,
        parsePropertyInput,
        pickedValues,
      },
      this.redact,
    );
    return this.loaded;
  }

  /** The quick inputs open now, so a test can see a withdrawn form close. */
  get open(): Set<vscode.QuickInput> {
    return this.real.open;
  }
  consent(server: string, message: string, fields: FormField[], signal: AbortSignal): Promise<'respond' | 'decline' | undefined> {
    return this.real.consent(server, message, fields, signal);
  }
  askField(step: FieldStep, signal: AbortSignal): Promise<FieldAnswer> {
    return this.real.askField(step, signal);
  }
  review(step: ReviewStep, signal: AbortSignal): Promise<ReviewAnswer> {
    return this.real.review(step, signal);
  }
  openPage(server: string, url: URL, message: string, signal: AbortSignal): Promise<'open' | 'decline' | undefined> {
    return this.real.openPage(server, url, message, signal);
  }
  waitForPages(server: string, what: string, allCompleted: Promise<void>, signal: AbortSignal): Promise<'completed' | 'retry' | 'stop'> {
    return this.real.waitForPages(server, what, allCompleted, signal);
  }
}
