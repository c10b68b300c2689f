package activities

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLabelValue(t *testing.T) {
	assert.Equal(t, "unknown", LabelValue(""))
	assert.Equal(t, "stake", LabelValue("stake"))
}
