/**
 * Prompt templates of workflow steps (docs/workflows.md): `{{input}}`, `{{inputs.<name>}}` and
 * `{{steps.<id>.output}}`, spaces inside the braces allowed. Nothing else is a variable; a
 * literal `{{` that is not one is an error at load time, so a typo never reaches a model.
 */
export type TemplateVar =
  | { readonly kind: 'input' }
  | { readonly kind: 'inputs'; readonly name: string }
  | { readonly kind: 'step'; readonly id: string };

export interface TemplateRef {
  readonly text: string;
  /** Null: not a known variable form. */
  readonly variable: TemplateVar | null;
}

const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;

function parseVariable(expression: string): TemplateVar | null {
  if (expression === 'input') return { kind: 'input' };
  let m = /^inputs\.([A-Za-z0-9_-]+)$/.exec(expression);
  if (m) return { kind: 'inputs', name: m[1]! };
  m = /^steps\.([A-Za-z0-9_-]+)\.output$/.exec(expression);
  if (m) return { kind: 'step', id: m[1]! };
  return null;
}

/** Every `{{…}}` of a template, in order. */
export function templateRefs(template: string): TemplateRef[] {
  return [...template.matchAll(PLACEHOLDER)].map((m) => ({ text: m[0], variable: parseVariable(m[1]!) }));
}

export interface TemplateValues {
  readonly input: string;
  readonly inputs: Readonly<Record<string, string>>;
  readonly outputs: Readonly<Record<string, string>>;
}

/** Fill a validated template. A value missing at run time (cannot happen after validation) renders empty. */
export function renderTemplate(template: string, values: TemplateValues): string {
  return template.replace(PLACEHOLDER, (whole, expression: string) => {
    const variable = parseVariable(expression);
    if (!variable) return whole;
    if (variable.kind === 'input') return values.input;
    if (variable.kind === 'inputs') return values.inputs[variable.name] ?? '';
    return values.outputs[variable.id] ?? '';
  });
}
