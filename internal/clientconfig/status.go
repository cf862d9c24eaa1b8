package clientconfig

import "github.com/cairn-dev/cairn/pkg/client"

// PresentedKeys are the keys a federation's status answer presents.
func PresentedKeys(st *client.Status) Presented {
	return Presented{FederationKeyPEM: []byte(st.FederationPublicKey), LogKeyPEM: []byte(st.TLogPublicKey)}
}
