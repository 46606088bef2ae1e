/**
 * AMQP dead-letter exchanges, differential: the scenarios of dead-letter-scenarios.ts
 * against RabbitMQ and Redrive (see compare.ts).
 */
import { compareWithRabbit } from './compare.js';
import { deadLetterScenarios } from './dead-letter-scenarios.js';

compareWithRabbit('AMQP dead-letter exchanges match RabbitMQ', deadLetterScenarios);
