// Verifies one Verifiable Credential file, or a Presentation of credentials (each credential's proof; the presentation
// itself is not signed), with digitalbazaar's implementation, offline: the document loader
// serves only the documents named on the command line (the service's shipped contexts, and the status list
// credentials the credentials name, saved beforehand) and did:key documents, which
// the did:key driver makes from the key itself. Nothing is fetched.
//
//   node verify-credential.mjs CREDENTIAL-OR-PRESENTATION.json URL=FILE [URL=FILE ...]
//
// A credential's status (a credentialStatus of type BitstringStatusListEntry) is checked by digitalbazaar's
// vc-bitstring-status-list: the status list credential's proof verified, its bit read. The list's issuer is the
// service and each credential's its person, so the check that they match is off (docs/decisions.md).
// Prints {"verified": bool, "errors": [...], "statuses": {credential id: its bit}} and exits 0 when the credential
// verifies, 1 when it does not.
import {readFileSync} from 'node:fs';
import * as vc from '@digitalbazaar/vc';
import {DataIntegrityProof} from '@digitalbazaar/data-integrity';
import {cryptosuite as eddsaRdfc2022CryptoSuite} from '@digitalbazaar/eddsa-rdfc-2022-cryptosuite';
import * as Ed25519Multikey from '@digitalbazaar/ed25519-multikey';
import {driver} from '@digitalbazaar/did-method-key';
import {checkStatus as checkBitstringStatus} from '@digitalbazaar/vc-bitstring-status-list';

const [credentialFile, ...contextArgs] = process.argv.slice(2);
const documents = new Map(contextArgs.map(arg => {
  const at = arg.indexOf('=');
  return [arg.slice(0, at), JSON.parse(readFileSync(arg.slice(at + 1), 'utf8'))];
}));

const didKeys = driver();
didKeys.use({multibaseMultikeyHeader: 'z6Mk', fromMultibase: Ed25519Multikey.from});

async function documentLoader(url) {
  if(documents.has(url)) {
    return {contextUrl: null, documentUrl: url, document: documents.get(url)};
  }
  if(url.startsWith('did:key:')) {
    const document = await didKeys.get({url});
    return {contextUrl: null, documentUrl: url, document};
  }
  throw new Error(`refused to load ${url}: not a document given or a did:key`);
}

const document = JSON.parse(readFileSync(credentialFile, 'utf8'));
const suite = new DataIntegrityProof({cryptosuite: eddsaRdfc2022CryptoSuite});
const checkStatus = options => checkBitstringStatus({...options, verifyMatchingIssuers: false});
const result = [].concat(document.type).includes('VerifiablePresentation') ?
  await vc.verify({presentation: document, unsignedPresentation: true, suite, documentLoader, checkStatus}) :
  await vc.verifyCredential({credential: document, suite, documentLoader, checkStatus});
const errors = [];
const collect = error => {
  if(!error) {
    return;
  }
  errors.push(String(error.message || error));
  (error.errors || []).forEach(collect);
};
collect(result.error);
(result.results || []).forEach(r => collect(r.error));
(result.credentialResults || []).forEach(r => collect(r.error));
const verified = result.verified &&
  (result.credentialResults || []).every(r => r.verified);
const statuses = {};
for(const r of result.credentialResults || [{...result, credentialId: document.id}]) {
  collect(r.statusResult?.error);
  for(const status of r.statusResult?.results || []) {
    statuses[r.credentialId] = status.status;
  }
}
console.log(JSON.stringify({verified, errors, statuses}));
process.exit(verified ? 0 : 1);
