package v1alpha1

// WitnessPolicy is a Federation's transparency-log witnesses: the members' witnesses that
// cosign the embedded log's checkpoints (C2SP tlog-witness), and how many must.
// +kubebuilder:validation:XValidation:rule="self.quorum <= size(self.witnesses)",message="quorum must not exceed the number of witnesses"
type WitnessPolicy struct {
	// witnesses are the witnesses the log's checkpoints are sent to.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +listType=map
	// +listMapKey=name
	Witnesses []WitnessRef `json:"witnesses"`

	// quorum is how many of the witnesses must cosign a checkpoint for receipts to be
	// proven against it (k of n).
	// +kubebuilder:validation:Minimum=1
	Quorum int32 `json:"quorum"`
}

// WitnessRef is one witness.
type WitnessRef struct {
	// name names the witness in the policy.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// key is the witness's cosignature/v1 verifier key, <name>+<hash>+<base64 key>, as
	// `cairn witness keygen` prints it.
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^[^+\s]+\+[0-9a-f]{8}\+[A-Za-z0-9+/=]+$`
	Key string `json:"key"`

	// url is the witness's submission prefix: checkpoints are posted to
	// <url>/add-checkpoint.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.startsWith('https://') || self.startsWith('http://')",message="url must be an http or https URL"
	URL string `json:"url"`
}
