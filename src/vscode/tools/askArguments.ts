import { orderedProperties, type JsonSchemaObject } from '../../core';
import type { ArgumentAnswer, ArgumentStep } from '../common/answers';

/**
 * Asks for each property of an input schema in turn (required first), one `ask` per argument
 * (`HostUi.askArgument`), with skipping of optional ones and Back. Resolves undefined when the
 * person cancels.
 */
export async function askArguments(
  ask: (step: ArgumentStep) => Promise<ArgumentAnswer>,
  title: string,
  schema: JsonSchemaObject | undefined,
  initial: Record<string, unknown> = {},
): Promise<Record<string, unknown> | undefined> {
  const specs = orderedProperties(schema);
  const args: Record<string, unknown> = { ...initial };
  for (let i = 0; i < specs.length;) {
    const spec = specs[i];
    const answer = await ask({ title: `${title} (${i + 1}/${specs.length})`, spec, current: args[spec.name], canGoBack: i > 0 });
    if (answer === undefined) return undefined;
    if (answer === 'back') {
      i--;
      continue;
    }
    if (answer === 'skip') delete args[spec.name];
    else args[spec.name] = answer.value;
    i++;
  }
  return args;
}
