/**
 * AMQP differential test: every scenario of scenarios.ts runs through amqplib against
 * the real RabbitMQ (127.0.0.1:5672, guest/guest, or REDRIVE_TEST_AMQP_URL) and against
 * Redrive's AMQP listener, and what the client observes must be the same.
 */
import { compareWithRabbit } from './compare.js';
import { scenarios } from './scenarios.js';

compareWithRabbit('AMQP scenarios match RabbitMQ', scenarios);
