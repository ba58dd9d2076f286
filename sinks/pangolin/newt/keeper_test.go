package newt_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/newt"
)

func newKeeper(objs ...client.Object) (*newt.Keeper, client.Client, *int) {
	c := fake.NewClientBuilder().WithObjects(objs...).Build()
	minted := 0
	return &newt.Keeper{Reader: c, Writer: c, Mint: func() newt.Credentials {
		minted++
		return newt.Credentials{ID: "abcdefghijklmno", Secret: testSecret}
	}}, c, &minted
}

func key(name string) types.NamespacedName {
	return types.NamespacedName{Namespace: "pic-system", Name: name}
}

func TestCredentials(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name       string
		existing   []client.Object
		mint       bool
		wantErr    bool
		wantMinted int
	}{
		{name: "a missing Secret gets fresh credentials when minting is allowed", mint: true, wantMinted: 1},
		{name: "a missing Secret is lost credentials when the site exists", mint: false, wantErr: true},
		{name: "an existing Secret's credentials are kept", mint: true, existing: []client.Object{testAgent.Secret(newt.Credentials{ID: "kept-id", Secret: "kept-secret"})}},
		{name: "a Secret emptied by hand is lost credentials when the site exists", mint: false, wantErr: true,
			existing: []client.Object{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "newt-edge", Namespace: "pic-system"}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k, c, minted := newKeeper(tc.existing...)
			creds, err := k.Credentials(ctx, testAgent, tc.mint)
			assert.Equal(t, tc.wantMinted, *minted)
			if tc.wantErr {
				require.ErrorIs(t, err, newt.ErrNoCredentials)
				assert.NotContains(t, err.Error(), testSecret)
				return
			}
			require.NoError(t, err)
			var s corev1.Secret
			require.NoError(t, c.Get(ctx, key("newt-edge"), &s))
			assert.Equal(t, creds.ID, string(s.Data[newt.SecretKeyID]))
			assert.Equal(t, creds.Secret, string(s.Data[newt.SecretKeySecret]))
			assert.Equal(t, []metav1.OwnerReference{testAgent.Owner}, s.OwnerReferences, "the owner is put on it")
			assert.Equal(t, newt.ManagedBy, s.Labels[newt.LabelManagedBy])
		})
	}
}

func TestDeploymentIsCreatedThenPutBack(t *testing.T) {
	ctx := context.Background()
	k, c, _ := newKeeper()
	wrote, err := k.Deployment(ctx, testAgent)
	require.NoError(t, err)
	assert.True(t, wrote, "created")

	wrote, err = k.Deployment(ctx, testAgent)
	require.NoError(t, err)
	assert.False(t, wrote, "nothing to do the second time")

	var d appsv1.Deployment
	require.NoError(t, c.Get(ctx, key("newt-edge"), &d))
	d.Spec.Template.Spec.Containers[0].Image = "evil.example/newt:latest"
	d.Spec.Template.Spec.Containers[0].SecurityContext.ReadOnlyRootFilesystem = nil
	d.OwnerReferences = nil
	d.Labels["team"] = "kept"
	require.NoError(t, c.Update(ctx, &d))

	wrote, err = k.Deployment(ctx, testAgent)
	require.NoError(t, err)
	assert.True(t, wrote, "a hand edit is put back")
	require.NoError(t, c.Get(ctx, key("newt-edge"), &d))
	assert.Equal(t, testAgent.Image, d.Spec.Template.Spec.Containers[0].Image)
	assert.True(t, *d.Spec.Template.Spec.Containers[0].SecurityContext.ReadOnlyRootFilesystem)
	assert.Equal(t, []metav1.OwnerReference{testAgent.Owner}, d.OwnerReferences)
	assert.Equal(t, "kept", d.Labels["team"], "labels PIC does not set stay")
}

func TestOwner(t *testing.T) {
	ctx := context.Background()
	pic := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "pangolin-ingress-controller", Namespace: "pic-system", UID: "uid-pic"}}
	k, _, _ := newKeeper(pic)
	owner, err := k.Owner(ctx, "pic-system", "pangolin-ingress-controller")
	require.NoError(t, err)
	assert.Equal(t, types.UID("uid-pic"), owner.UID)
	assert.Equal(t, "Deployment", owner.Kind)

	_, err = k.Owner(ctx, "pic-system", "renamed")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "pangolin.newtOwner", "the error names the key to fix")
}
