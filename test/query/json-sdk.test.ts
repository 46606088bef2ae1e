import { jsonSdkDriver } from './drivers.js';
import { runScenarios } from './run-scenarios.js';

// The same scenarios as the Query clients, over JSON: one behaviour for both protocols.
runScenarios('@aws-sdk/client-sqs over JSON', jsonSdkDriver);
