// What the module adds to Foundry's configured types: its settings and flags.
export {};

declare global {
  interface SettingConfig {
    "vtt-bridge.url": string;
    "vtt-bridge.table": string;
    "vtt-bridge.key": string;
    "vtt-bridge.seen": string;
  }

  interface FlagConfig {
    Actor: {
      "vtt-bridge": {
        enabled?: boolean;
        ruleset?: string | null;
        system?: Record<string, unknown>;
        packs?: Record<string, Record<string, unknown>>;
        version?: number;
      };
    };
    ChatMessage: {
      "vtt-bridge": {
        attack?: string;
        gm?: boolean;
      };
    };
  }
}
