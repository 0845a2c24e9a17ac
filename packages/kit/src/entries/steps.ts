/** `@mkt/kit/steps`: the step runner — a multi-step flow as a table of named steps over the record that owns it. */
export {
  defineFlow,
  type Flow,
  type FlowOptions,
  type FlowRun,
  kindStep,
  resumeFlow,
  runFlow,
  type Step,
  type StepKind,
  type StepStatus,
} from '../steps';
