import { createContext } from 'react';
import type { ApprovalPreview } from '../../src/authz/approvals/preview';
import { previewApproval } from '../../src/authz/approvals/preview';

/**
 * What the approval queue needs beyond `ModalProps`: the details preview (a diff against the
 * workspace's files). start-tui provides it with the workspace root; without a provider the
 * details show the input as JSON.
 */
export interface ApprovalServices {
  preview(toolName: string, input: unknown): Promise<ApprovalPreview>;
}

export function approvalServicesFor(workspaceRoot: string): ApprovalServices {
  return { preview: (toolName, input) => previewApproval(workspaceRoot, toolName, input) };
}

const JSON_ONLY: ApprovalServices = {
  preview: async (_toolName, input) => ({ kind: 'json', text: JSON.stringify(input, null, 2) ?? String(input) }),
};

export const ApprovalServicesContext = createContext<ApprovalServices>(JSON_ONLY);
