import { call, listQueueUrls, queueAttributes, queueUrl, type Attributes } from './api.js';
import { h, queueNameOf } from './dom.js';
import { deadLetterTargetOf } from './queue-summaries.js';

/**
 * The queue settings form, for the queue page (edit) and the create page. It checks
 * ranges before sending; the server checks again and its error is shown as it comes.
 */
interface NumberField {
  name: string;
  label: string;
  min: number;
  max: number;
  unit?: string;
  /** Redrive's own settings may be left empty, which removes them. */
  optional?: boolean;
  hint: string;
}

const NUMBERS: NumberField[] = [
  {
    name: 'VisibilityTimeout',
    label: 'Visibility timeout',
    min: 0,
    max: 43200,
    unit: 's',
    hint: '0 s to 12 h; default 30 s',
  },
  { name: 'DelaySeconds', label: 'Delivery delay', min: 0, max: 900, unit: 's', hint: '0 to 900 s' },
  {
    name: 'MessageRetentionPeriod',
    label: 'Retention',
    min: 60,
    max: 1209600,
    unit: 's',
    hint: '1 min to 14 days; default 4 days',
  },
  {
    name: 'MaximumMessageSize',
    label: 'Maximum message size',
    min: 1024,
    max: 1048576,
    unit: 'bytes',
    hint: '1 KiB to 1 MiB',
  },
  {
    name: 'ReceiveMessageWaitTimeSeconds',
    label: 'Receive wait (long poll)',
    min: 0,
    max: 20,
    unit: 's',
    hint: '0 to 20 s',
  },
];

const REDRIVE_NUMBERS: NumberField[] = [
  {
    name: 'RedriveMessageTtlSeconds',
    label: 'Message TTL',
    min: 0,
    max: 1209600,
    unit: 's',
    optional: true,
    hint: 'expired messages are dead-lettered (reason expired); empty for none',
  },
  {
    name: 'RedriveMaxLength',
    label: 'Maximum length',
    min: 1,
    max: 2 ** 31 - 1,
    unit: 'messages',
    optional: true,
    hint: 'empty for no limit',
  },
  {
    name: 'RedriveMaxLengthBytes',
    label: 'Maximum length in bytes',
    min: 1,
    max: Number.MAX_SAFE_INTEGER,
    unit: 'bytes',
    optional: true,
    hint: 'empty for no limit',
  },
];

export interface FormOptions {
  /** The queue's current attributes; absent when creating. */
  current?: Attributes;
  /** The queue's own name (excluded from the dead-letter pickers). */
  self?: string;
  fifo: boolean;
  submitLabel: string;
  /** Gets the attributes that changed (or, when creating, that were set). */
  onSubmit(attributes: Record<string, string>): Promise<void>;
}

export async function attributesForm(opts: FormOptions): Promise<HTMLFormElement> {
  const cur = opts.current ?? {};
  const others = (await listQueueUrls())
    .map(queueNameOf)
    .filter((n) => n !== opts.self && n.endsWith('.fifo') === opts.fifo);
  const target = deadLetterTargetOf(cur.RedrivePolicy);
  const allow = parseAllow(cur.RedriveAllowPolicy);

  const numberInput = (f: NumberField) =>
    h(
      'label',
      {},
      h('span', { class: 'label' }, f.label, f.unit ? h('span', { class: 'muted' }, ` (${f.unit})`) : null),
      h('input', {
        name: f.name,
        type: 'number',
        inputmode: 'numeric',
        min: f.min,
        max: f.max,
        step: 1,
        value: cur[f.name] ?? '',
        required: !f.optional && !!opts.current,
      }),
      h('small', { class: 'hint' }, f.hint),
      h('small', { class: 'field-error', 'data-for': f.name }),
    );
  const dlqSelect = h(
    'select',
    { name: 'deadLetterQueue' },
    h('option', { value: '' }, 'none'),
    others.map((n) => h('option', { value: n, selected: target !== undefined && queueNameOf(target.arn) === n }, n)),
  );
  const allowSelect = h(
    'select',
    { name: 'redrivePermission' },
    ['', 'allowAll', 'denyAll', 'byQueue'].map((v) =>
      h('option', { value: v, selected: allow.permission === v }, v || 'not set (allow all)'),
    ),
  );
  const allowQueues = h(
    'select',
    { name: 'allowQueues', multiple: true, size: Math.min(6, Math.max(2, others.length)) },
    others.map((n) => h('option', { value: n, selected: allow.queues.includes(n) }, n)),
  );
  const overflow = h(
    'select',
    { name: 'RedriveOverflow' },
    ['', 'drop-head', 'reject-publish'].map((v) =>
      h('option', { value: v, selected: (cur.RedriveOverflow ?? '') === v }, v || 'not set (drop-head)'),
    ),
  );

  const form = h(
    'form',
    { class: 'settings', novalidate: true },
    h(
      'fieldset',
      {},
      h('legend', {}, 'Delivery'),
      NUMBERS.map(numberInput),
      opts.fifo
        ? h(
            'label',
            { class: 'inline' },
            h('input', {
              type: 'checkbox',
              name: 'ContentBasedDeduplication',
              checked: cur.ContentBasedDeduplication === 'true',
            }),
            ' Content-based deduplication',
          )
        : null,
    ),
    h(
      'fieldset',
      {},
      h('legend', {}, 'Dead-letter queue'),
      h(
        'label',
        {},
        h('span', { class: 'label' }, 'Dead-letter queue'),
        dlqSelect,
        h('small', { class: 'hint' }, `a ${opts.fifo ? 'FIFO' : 'standard'} queue of this account`),
      ),
      numberInput({
        name: 'maxReceiveCount',
        label: 'Maximum receives',
        min: 1,
        max: 1000,
        hint: 'a message is dead-lettered on the receive after this many',
        optional: true,
      }),
      h('label', {}, h('span', { class: 'label' }, 'Who may use this queue as their DLQ'), allowSelect),
      h('label', {}, h('span', { class: 'label' }, 'Allowed source queues (byQueue, at most 10)'), allowQueues),
    ),
    h(
      'fieldset',
      {},
      h('legend', {}, 'Redrive settings'),
      REDRIVE_NUMBERS.map(numberInput),
      h(
        'label',
        {},
        h('span', { class: 'label' }, 'When full'),
        overflow,
        h(
          'small',
          { class: 'hint' },
          'drop-head dead-letters the oldest (reason maxlen); reject-publish refuses the send',
        ),
      ),
    ),
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'submit', class: 'primary' }, opts.submitLabel),
      h('span', { class: 'form-status muted' }),
    ),
  );
  (form.elements.namedItem('maxReceiveCount') as HTMLInputElement).value = target ? String(target.maxReceiveCount) : '';

  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void submit();
  });
  const submit = async () => {
    const status = form.querySelector('.form-status')!;
    for (const el of form.querySelectorAll('.field-error')) el.textContent = '';
    const problems = validate(form, [...NUMBERS, ...REDRIVE_NUMBERS], dlqSelect.value, allowSelect.value, allowQueues);
    if (problems) return;
    const wanted: Record<string, string> = {};
    for (const f of [...NUMBERS, ...REDRIVE_NUMBERS]) wanted[f.name] = value(form, f.name);
    if (opts.fifo)
      wanted.ContentBasedDeduplication = String(
        (form.elements.namedItem('ContentBasedDeduplication') as HTMLInputElement).checked,
      );
    wanted.RedriveOverflow = overflow.value;
    status.textContent = 'Saving…';
    try {
      wanted.RedrivePolicy = dlqSelect.value
        ? JSON.stringify({
            deadLetterTargetArn: await arnOf(dlqSelect.value),
            maxReceiveCount: Number(value(form, 'maxReceiveCount')),
          })
        : '';
      wanted.RedriveAllowPolicy =
        allowSelect.value === ''
          ? ''
          : allowSelect.value === 'byQueue'
            ? JSON.stringify({
                redrivePermission: 'byQueue',
                sourceQueueArns: await Promise.all(selected(allowQueues).map(arnOf)),
              })
            : JSON.stringify({ redrivePermission: allowSelect.value });
      if (
        target &&
        dlqSelect.value &&
        queueNameOf(target.arn) === dlqSelect.value &&
        target.maxReceiveCount === Number(value(form, 'maxReceiveCount'))
      ) {
        wanted.RedrivePolicy = cur.RedrivePolicy!;
      }
      if (allow.raw !== undefined && samePermission(allow, allowSelect.value, selected(allowQueues)))
        wanted.RedriveAllowPolicy = allow.raw;
      const changed = Object.fromEntries(
        Object.entries(wanted).filter(([k, v]) => (cur[k] ?? '') !== v && (opts.current || v !== '')),
      );
      await opts.onSubmit(changed);
      status.textContent = Object.keys(changed).length ? 'Saved.' : 'Nothing changed.';
    } catch (e) {
      status.textContent = '';
      showError(form, e instanceof Error ? e.message : String(e));
    }
  };
  return form;
}

function validate(
  form: HTMLFormElement,
  fields: NumberField[],
  dlq: string,
  permission: string,
  allowQueues: HTMLSelectElement,
): boolean {
  let bad = false;
  const complain = (name: string, text: string) => {
    bad = true;
    const el = form.querySelector(`.field-error[data-for="${name}"]`);
    if (el) el.textContent = text;
  };
  for (const f of [
    ...fields,
    { name: 'maxReceiveCount', min: 1, max: 1000, optional: !dlq, label: 'Maximum receives' } as NumberField,
  ]) {
    const v = value(form, f.name);
    if (v === '') {
      if (!f.optional && (form.elements.namedItem(f.name) as HTMLInputElement).required) complain(f.name, 'Required.');
      continue;
    }
    if (!/^\d+$/.test(v) || Number(v) < f.min || Number(v) > f.max)
      complain(f.name, `A whole number from ${f.min.toLocaleString('en-US')} to ${f.max.toLocaleString('en-US')}.`);
  }
  if (dlq && value(form, 'maxReceiveCount') === '') complain('maxReceiveCount', 'Required with a dead-letter queue.');
  if (permission === 'byQueue' && (selected(allowQueues).length < 1 || selected(allowQueues).length > 10)) {
    showError(form, 'byQueue needs 1 to 10 allowed source queues.');
    bad = true;
  }
  return bad;
}

function showError(form: HTMLFormElement, text: string): void {
  let el = form.querySelector('.form-error');
  if (!el) form.querySelector('.actions')!.before((el = h('p', { class: 'form-error error', role: 'alert' })));
  el.textContent = text;
}

const value = (form: HTMLFormElement, name: string) =>
  ((form.elements.namedItem(name) as HTMLInputElement | null)?.value ?? '').trim();
const selected = (s: HTMLSelectElement) => [...s.selectedOptions].map((o) => o.value);

async function arnOf(name: string): Promise<string> {
  return (await queueAttributes(await queueUrl(name))).QueueArn!;
}

function parseAllow(raw: string | undefined): { raw?: string; permission: string; queues: string[] } {
  if (!raw) return { permission: '', queues: [] };
  try {
    const p = JSON.parse(raw) as { redrivePermission?: string; sourceQueueArns?: string[] };
    return { raw, permission: p.redrivePermission ?? '', queues: (p.sourceQueueArns ?? []).map(queueNameOf) };
  } catch {
    return { raw, permission: '', queues: [] };
  }
}

function samePermission(
  allow: { permission: string; queues: string[] },
  permission: string,
  queues: string[],
): boolean {
  return (
    allow.permission === permission &&
    (permission !== 'byQueue' || [...allow.queues].sort().join() === [...queues].sort().join())
  );
}

/** Creates a queue: the form's attributes plus FifoQueue for a FIFO name. */
export async function createQueue(name: string, fifo: boolean, attributes: Record<string, string>): Promise<string> {
  const out = await call<{ QueueUrl: string }>('CreateQueue', {
    QueueName: name,
    Attributes: { ...attributes, ...(fifo ? { FifoQueue: 'true' } : {}) },
  });
  return out.QueueUrl;
}
