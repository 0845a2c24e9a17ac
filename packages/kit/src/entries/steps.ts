/** `@mkt/kit/steps`: the step runner — a multi-step flow as a table of named steps over the record that owns it. */
export {
  compensationOpId,
  defineFlow,
  type Flow,
  type FlowOptions,
  type FlowRun,
  isCompensating,
  kindStep,
  resumeFlow,
  runFlow,
  type Step,
  type StepKind,
  type StepStatus,
} from '../steps';
