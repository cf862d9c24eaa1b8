package policy

import (
	"errors"
	"fmt"
	"strings"
)

// Limits on a request's messages.
const (
	// MaxMessages is the most messages a request may carry.
	MaxMessages = 1024
	// MaxRoleBytes is the longest role of a message.
	MaxRoleBytes = 64
)

// Message is one message of a chat call, as the documented API sends a prompt:
// {"role": "user", "content": "..."}.
type Message struct {
	// Role is who speaks: system, user, assistant, tool or any other name the caller's
	// API uses. It must not be empty; rules do not read it.
	Role string `json:"role"`
	// Content is the message's text.
	Content string `json:"content"`
}

// messagesSeparator joins the contents of messages into the prompt patterns scan.
const messagesSeparator = "\n"

// MessagesText is the prompt messages stand for: their contents, in order, joined by
// newlines. Match offsets of a request given as messages are offsets into this text.
func MessagesText(msgs []Message) string {
	var b strings.Builder
	for i, m := range msgs {
		if i > 0 {
			b.WriteString(messagesSeparator)
		}
		b.WriteString(m.Content)
	}
	return b.String()
}

// checkMessages checks r's messages: at most MaxMessages, each with a role of 1 to
// MaxRoleBytes bytes, and, when r also gives a prompt, that it is the messages' text, so
// that a request cannot say two different things.
func (r Request) checkMessages() error {
	if r.Messages == nil {
		return nil
	}
	if len(r.Messages) == 0 {
		return errors.New("messages is empty: give at least one message, or leave it out")
	}
	if len(r.Messages) > MaxMessages {
		return fmt.Errorf("messages has %d entries, at most %d allowed", len(r.Messages), MaxMessages)
	}
	for i, m := range r.Messages {
		if m.Role == "" || len(m.Role) > MaxRoleBytes {
			return fmt.Errorf("messages[%d]: role must be 1-%d bytes (system, user, assistant, ...)", i, MaxRoleBytes)
		}
	}
	if r.Prompt != "" && r.Prompt != MessagesText(r.Messages) {
		return errors.New("prompt and messages disagree: give the messages, or the prompt, or a prompt equal to the messages' contents joined by newlines")
	}
	return nil
}

// promptText is the text the request sends to the model: its prompt, or its messages'
// text.
func (r Request) promptText() string {
	if r.Prompt == "" && len(r.Messages) > 0 {
		return MessagesText(r.Messages)
	}
	return r.Prompt
}
