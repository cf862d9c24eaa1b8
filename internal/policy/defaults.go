package policy

// DefaultRules returns the rules the service runs when no rule file is given, a fresh
// copy on every call:
//
//   - model-allowlist (warn): the common hosted and open model families; anything else
//     is reported, not refused, since local deployments name models freely.
//   - cost-ceiling (deny) above 5 USD per call, cost-warning (warn) above 1 USD.
//   - jailbreak (deny): the jailbreak category in the prompt.
//   - secrets-in-prompt (deny): API keys, tokens and private keys in the prompt.
//   - payment-card-in-prompt (deny): card numbers passing the Luhn check in the prompt.
//   - pii-in-prompt (warn): e-mail, phone, US SSN and IBAN in the prompt.
//   - pii-or-secrets-in-output (warn): all PII and secrets in the output.
//   - max-output-length (warn): outputs over 100,000 characters.
func DefaultRules() []Rule {
	usd := func(v float64) *float64 { return &v }
	return []Rule{
		{
			ID: "model-allowlist", Kind: KindModelAllowlist, Mode: ModeWarn,
			Description: "Calls should go to a known model family",
			Parameters: Parameters{Models: []string{
				"gpt-4o*", "gpt-4.1*", "gpt-4*", "gpt-3.5-turbo*", "gpt-5*", "o1*", "o3*", "o4-mini*",
				"claude-*", "gemini-*", "llama*", "meta-llama/*", "mistral*", "mixtral*", "codestral*",
				"qwen*", "deepseek*", "phi-*", "gemma*",
			}},
		},
		{
			ID: "cost-ceiling", Kind: KindMaxCostPerCall, Mode: ModeDeny,
			Description: "No single call may cost more than 5 USD",
			Parameters:  Parameters{MaxUSD: usd(5)},
		},
		{
			ID: "cost-warning", Kind: KindMaxCostPerCall, Mode: ModeWarn,
			Description: "Calls costing more than 1 USD are worth a look",
			Parameters:  Parameters{MaxUSD: usd(1)},
		},
		{
			ID: "jailbreak", Kind: KindPromptPattern, Mode: ModeDeny,
			Description: "Prompts must not try to override the model's instructions or safety rules",
			Parameters:  Parameters{Categories: []string{CategoryJailbreak}},
		},
		{
			ID: "secrets-in-prompt", Kind: KindPromptPattern, Mode: ModeDeny,
			Description: "Prompts must not carry API keys, tokens, passwords or private keys",
			Parameters:  Parameters{Categories: []string{CategoryAPIKey}},
		},
		{
			ID: "payment-card-in-prompt", Kind: KindPromptPattern, Mode: ModeDeny,
			Description: "Prompts must not carry payment card numbers",
			Parameters:  Parameters{Categories: []string{CategoryCreditCard}},
		},
		{
			ID: "pii-in-prompt", Kind: KindPromptPattern, Mode: ModeWarn,
			Description: "Prompts carrying personal data are reported",
			Parameters:  Parameters{Categories: []string{CategoryEmail, CategoryPhone, CategoryUSSSN, CategoryIBAN}},
		},
		{
			ID: "pii-or-secrets-in-output", Kind: KindPromptPattern, Mode: ModeWarn,
			Description: "Outputs carrying personal data or secrets are reported",
			Parameters:  Parameters{Categories: []string{CategoryPII, CategoryAPIKey}, Fields: []string{FieldOutput}},
		},
		{
			ID: "max-output-length", Kind: KindMaxOutputLength, Mode: ModeWarn,
			Description: "Outputs over 100,000 characters are reported",
			Parameters:  Parameters{MaxChars: 100_000},
		},
	}
}
