import type { CaseGroup } from '../harness.js';
import { consoleCases } from './console.js';
import { fairCases } from './fair.js';
import { fifoCases } from './fifo.js';
import { deadLetterCases } from './dead-letter.js';
import { deadLetterCopyCases } from './dead-letter-copies.js';
import { deathCases } from './deaths.js';
import { depthCases } from './depths.js';
import { envelopeCases } from './envelopes.js';
import { maintenanceCases } from './maintenance.js';
import { dueCases } from './maintenance-due.js';
import { exchangeCases } from './exchanges.js';
import { messageCases } from './messages.js';
import { moveScopeCases } from './move-scope.js';
import { moveByIdCases } from './move-by-id.js';
import { queueCases } from './queues.js';
import { heldDeliveryCases } from './held-deliveries.js';
import { textCases } from './text-fidelity.js';

/** Every conformance case group; add new groups here. */
export const cases: CaseGroup[] = [
  fifoCases,
  queueCases,
  messageCases,
  deadLetterCases,
  deadLetterCopyCases,
  deathCases,
  depthCases,
  maintenanceCases,
  dueCases,
  consoleCases,
  exchangeCases,
  fairCases,
  moveScopeCases,
  heldDeliveryCases,
  textCases,
  moveByIdCases,
  envelopeCases,
];
