import { h, parseUtc, queueNameOf } from './dom.js';
import { DEATH_REASONS } from '../../wire/deaths.js';
import type { MoveFilter } from './move-tasks.js';

/**
 * The message filter of the browser's search and of selective redrive: one set of
 * fields, named alike in both forms and in their URLs, read into the one MoveFilter
 * that PeekMessages and StartMessageMoveTask both take. A search's URL therefore opens
 * the redrive page with the same filter filled in.
 */
const FIELDS = [
  'BodyContains',
  'BodyJsonPath',
  'Equals',
  'attrName',
  'attrValue',
  'diedIn',
  'DeathReason',
  'after',
  'before',
];

/** The filter the fields in `values` describe; undefined when they describe none. `arnOf` turns a queue name into its ARN. */
export function filterFrom(values: URLSearchParams, arnOf: (name: string) => string): MoveFilter | undefined {
  const get = (n: string) => (values.get(n) ?? '').trim();
  const f: MoveFilter = {};
  if (get('BodyContains')) f.BodyContains = get('BodyContains');
  if (get('BodyJsonPath')) f.BodyJsonPath = get('BodyJsonPath');
  if (get('Equals')) f.Equals = jsonOrText(get('Equals'));
  if (get('attrName')) f.MessageAttribute = { Name: get('attrName'), Value: get('attrValue') };
  if (get('diedIn')) f.DeadLetterQueueSourceArn = arnOf(get('diedIn'));
  if (get('DeathReason')) f.DeathReason = get('DeathReason') as MoveFilter['DeathReason'];
  if (get('after') && !Number.isNaN(parseUtc(get('after')))) f.DeadLetteredAfter = parseUtc(get('after'));
  if (get('before') && !Number.isNaN(parseUtc(get('before')))) f.DeadLetteredBefore = parseUtc(get('before'));
  return Object.keys(f).length ? f : undefined;
}

/** Only the filter's fields of `values`, e.g. to carry a search over to the redrive page. */
export function filterParams(values: URLSearchParams): URLSearchParams {
  return new URLSearchParams([...values].filter(([k, v]) => FIELDS.includes(k) && v !== ''));
}

/**
 * The form fields, filled in from `values`; `sources` are the URLs of the queues that
 * dead-letter here. The fields about deaths are shown on dead-letter queues only.
 */
export function filterFields(values: URLSearchParams, sources: string[], deadLetterQueue = true): HTMLElement[] {
  const input = (name: string, attrs: Record<string, string | number | boolean> = {}) =>
    h('input', { name, value: values.get(name) ?? '', ...attrs });
  const select = (name: string, label: string, options: string[]) =>
    h(
      'select',
      { name, 'aria-label': label },
      h('option', { value: '' }, `any ${label.toLowerCase()}`),
      options.map((o) => h('option', { value: o, selected: o === values.get(name) }, o)),
    );
  const field = (label: string, control: HTMLElement) => h('label', {}, h('span', { class: 'label' }, label), control);
  const utc = {
    placeholder: 'YYYY-MM-DD HH:MM:SS',
    pattern: '\\d{4}-\\d{2}-\\d{2}([ T]\\d{2}:\\d{2}(:\\d{2})?)?( ?UTC)?',
    title: 'a time in UTC',
  };
  return [
    field('Body contains', input('BodyContains', { type: 'search' })),
    h(
      'div',
      { class: 'row' },
      field('JSON path', input('BodyJsonPath', { placeholder: '$.type' })),
      field('equals (JSON value)', input('Equals', { placeholder: '"refund"' })),
    ),
    h(
      'div',
      { class: 'row' },
      field('Message attribute', input('attrName', { placeholder: 'name' })),
      field('has the value', input('attrValue')),
    ),
    ...(deadLetterQueue
      ? [
          h(
            'div',
            { class: 'row' },
            field('Died in', select('diedIn', 'Source', sources.map(queueNameOf))),
            field('Why', select('DeathReason', 'Death reason', [...DEATH_REASONS])),
          ),
          h(
            'div',
            { class: 'row' },
            field('Dead-lettered after (UTC)', input('after', utc)),
            field('and before (UTC)', input('before', utc)),
          ),
        ]
      : []),
  ];
}

function jsonOrText(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return s;
  }
}
