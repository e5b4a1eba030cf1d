/** Every id the manifest and the code share, in one place. */
export const Commands = {
  startServer: 'mcpHost.startServer',
  stopServer: 'mcpHost.stopServer',
  restartServer: 'mcpHost.restartServer',
  showServerLog: 'mcpHost.showServerLog',
  setServerLogLevel: 'mcpHost.setServerLogLevel',
  showServerInfo: 'mcpHost.showServerInfo',
  editServerSettings: 'mcpHost.editServerSettings',
  removeServer: 'mcpHost.removeServer',
  showTrace: 'mcpHost.showTrace',
  addServer: 'mcpHost.addServer',
  importServers: 'mcpHost.importServers',
  refresh: 'mcpHost.refresh',
  showLog: 'mcpHost.showLog',
  callTool: 'mcpHost.callTool',
  openApp: 'mcpHost.openApp',
  reviewChanges: 'mcpHost.reviewChanges',
  rerunLastToolCall: 'mcpHost.rerunLastToolCall',
  showCallHistory: 'mcpHost.showCallHistory',
  readResource: 'mcpHost.readResource',
  openResource: 'mcpHost.openResource',
  getPrompt: 'mcpHost.getPrompt',
  copyPrompt: 'mcpHost.copyPrompt',
  showSamplingHistory: 'mcpHost.showSamplingHistory',
  resetSamplingConsent: 'mcpHost.resetSamplingConsent',
  signOut: 'mcpHost.signOut',
  cancelTask: 'mcpHost.cancelTask',
  runTaskInBackground: 'mcpHost.runTaskInBackground',
  showAuditLog: 'mcpHost.showAuditLog',
  verifyAuditLog: 'mcpHost.verifyAuditLog',
  exportAuditLog: 'mcpHost.exportAuditLog',
  exportAuditKey: 'mcpHost.exportAuditKey',
  setTelemetryHeaders: 'mcpHost.setTelemetryHeaders',
  shareWithChat: 'mcpHost.shareWithChat',
  stopSharingWithChat: 'mcpHost.stopSharingWithChat',
  connectAgent: 'mcpHost.connectAgent',
  disconnectAgent: 'mcpHost.disconnectAgent',
} as const;

export const Views = {
  container: 'mcpHost',
  servers: 'mcpHost.servers',
} as const;

/** Context keys the code sets, for `when` clauses: commands that cannot apply are not offered. */
export const ContextKeys = {
  hasServer: 'mcpHost.hasServer',
  hasStartableServer: 'mcpHost.hasStartableServer',
  hasStoppableServer: 'mcpHost.hasStoppableServer',
  hasHttpServer: 'mcpHost.hasHttpServer',
} as const;

export const Settings = {
  section: 'mcpHost',
  servers: 'servers',
  inputs: 'inputs',
  trace: 'trace',
  maxRestarts: 'restart.maxRestarts',
  restartWindowSeconds: 'restart.windowSeconds',
  rootsFence: 'roots.fence',
  rootsExtra: 'roots.extra',
  maskingPatterns: 'masking.patterns',
  chatConnection: 'chat.connection',
  sandboxDefault: 'sandbox.default',
  agentsConfirmTools: 'agents.confirmTools',
} as const;

export const TRACE_LANGUAGE_ID = 'mcp-trace';
